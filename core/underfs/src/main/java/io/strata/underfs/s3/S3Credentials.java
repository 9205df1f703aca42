package io.strata.underfs.s3;

import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProviderChain;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.ContainerCredentialsProvider;
import software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider;
import software.amazon.awssdk.auth.credentials.InstanceProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.auth.credentials.SystemPropertyCredentialsProvider;
import software.amazon.awssdk.auth.credentials.WebIdentityTokenFileCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;

/**
 * Where an S3 store finds its credentials: the mount's keys; else, in order, AWS_ACCESS_KEY_ID and
 * friends, the {@code aws.accessKeyId} system properties, a web identity token, the shared profile
 * files and a container's credentials; and the EC2 instance metadata service only with {@code
 * s3.instance.credentials=true}, since on any other machine asking it costs seconds of timeouts for
 * nothing. When no source has credentials a request fails with {@link Missing} as its cause, which
 * {@link S3Errors} turns into one line that says what to set, instead of the SDK's report of every
 * source it tried.
 */
final class S3Credentials implements AwsCredentialsProvider {
  private final AwsCredentialsProvider chain;

  private S3Credentials(AwsCredentialsProvider chain) {
    this.chain = chain;
  }

  static AwsCredentialsProvider of(S3Options options) {
    if (!options.accessKey().isEmpty()) {
      return StaticCredentialsProvider.create(
          options.sessionToken().isEmpty()
              ? AwsBasicCredentials.create(options.accessKey(), options.secretKey())
              : AwsSessionCredentials.create(
                  options.accessKey(), options.secretKey(), options.sessionToken()));
    }
    List<AwsCredentialsProvider> sources =
        new ArrayList<>(
            List.of(
                EnvironmentVariableCredentialsProvider.create(),
                SystemPropertyCredentialsProvider.create(),
                WebIdentityTokenFileCredentialsProvider.create(),
                ProfileCredentialsProvider.create(),
                ContainerCredentialsProvider.builder().build()));
    if (options.instanceCredentials()) {
      sources.add(InstanceProfileCredentialsProvider.create());
    }
    return new S3Credentials(
        AwsCredentialsProviderChain.builder()
            .reuseLastProviderEnabled(true)
            .credentialsProviders(sources)
            .build());
  }

  @Override
  public AwsCredentials resolveCredentials() {
    try {
      return chain.resolveCredentials();
    } catch (SdkClientException e) {
      // The chain's message lists every source and why it had nothing: kept for the debug log
      // through the cause, never shown to the user.
      throw SdkClientException.create(Missing.MESSAGE, new Missing(e));
    }
  }

  /** No source had credentials. */
  static final class Missing extends RuntimeException {
    static final String MESSAGE = "no S3 credentials found";

    Missing(Throwable cause) {
      super(MESSAGE, cause, false, false);
    }
  }
}
