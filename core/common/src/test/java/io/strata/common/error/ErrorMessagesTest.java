package io.strata.common.error;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class ErrorMessagesTest {
  @Test
  void aStrataFailureKeepsItsOwnWords() {
    assertEquals("Path does not exist: /x", ErrorMessages.describe(StrataException.notFound("/x")));
  }

  @Test
  void localFileFailuresNameTheFileAndTheProblemWithoutAClassName() {
    assertEquals(
        "/data/x: no such file or directory",
        ErrorMessages.describe(new NoSuchFileException("/data/x")));
    assertEquals(
        "/data/x: permission denied",
        ErrorMessages.describe(new UncheckedIOException(new AccessDeniedException("/data/x"))));
  }

  @Test
  void wrappersAreSeenThrough() {
    assertEquals(
        "Path does not exist: /x",
        ErrorMessages.describe(
            new ExecutionException(new UncheckedIOException(StrataException.notFound("/x")))));
  }

  @Test
  void aServersAnswerKeepsItsWordsAcrossGrpc() {
    StatusRuntimeException wire =
        GrpcErrors.toStatus(
            StrataException.unavailable(
                "Cannot reach S3 at http://127.0.0.1:9: check s3.endpoint", null));
    assertTrue(GrpcErrors.served(wire));
    assertEquals(
        "Cannot reach S3 at http://127.0.0.1:9: check s3.endpoint", ErrorMessages.describe(wire));
  }

  @Test
  void anUnderStoresIoFailureCrossesGrpcWithoutItsClassName() {
    StatusRuntimeException wire = GrpcErrors.toStatus(new IOException("S3 at x failed"));
    assertEquals("S3 at x failed", GrpcErrors.fromStatus(wire).getMessage());
  }

  @Test
  void aConnectionFailureSaysWhatTheConnectionSaidNotGrpcsWords() {
    StatusRuntimeException refused =
        Status.UNAVAILABLE
            .withDescription("io exception")
            .withCause(new ConnectException("finishConnect(..) failed with error(-111)"))
            .asRuntimeException();
    String m = ErrorMessages.describe(refused);
    assertEquals("connection refused", m);
    StatusRuntimeException reset =
        Status.UNAVAILABLE
            .withDescription("io exception")
            .withCause(new IOException("Connection reset by peer"))
            .asRuntimeException();
    assertEquals("connection failed (Connection reset by peer)", ErrorMessages.describe(reset));
  }

  @Test
  void onlyAFailureOfNoKnownKindNamesItsClass() {
    String m = ErrorMessages.describe(new IllegalStateException("broken"));
    assertTrue(m.startsWith("internal error: IllegalStateException: broken"), m);
    assertTrue(m.contains("STRATA_DEBUG=1"), m);
  }
}
