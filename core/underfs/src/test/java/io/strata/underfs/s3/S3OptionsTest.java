package io.strata.underfs.s3;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class S3OptionsTest {
  @Test
  void theInstanceMetadataServiceIsAskedByDefaultOnlyForAwsItself() {
    assertTrue(S3Options.parse(Map.of()).instanceCredentials());
    assertFalse(
        S3Options.parse(Map.of(S3Options.ENDPOINT, "http://127.0.0.1:9000")).instanceCredentials());
    assertTrue(
        S3Options.parse(
                Map.of(
                    S3Options.ENDPOINT,
                    "http://127.0.0.1:9000",
                    S3Options.INSTANCE_CREDENTIALS,
                    "true"))
            .instanceCredentials());
    assertFalse(
        S3Options.parse(Map.of(S3Options.INSTANCE_CREDENTIALS, "false")).instanceCredentials());
  }

  @Test
  void aWrongInstanceCredentialsValueNamesTheValuesItTakes() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> S3Options.parse(Map.of(S3Options.INSTANCE_CREDENTIALS, "yes")));
    assertTrue(
        e.getMessage().contains("s3.instance.credentials")
            && e.getMessage().contains("true, false or auto"),
        e.getMessage());
  }
}
