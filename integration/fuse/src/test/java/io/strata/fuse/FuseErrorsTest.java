package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.Test;
import ru.serce.jnrfuse.ErrorCodes;

class FuseErrorsTest {
  static int errno(ErrorCode code) {
    return FuseErrors.toErrno("read", "/p", new StrataException(code, "x"));
  }

  @Test
  void strataErrorsMapToTheErrnoAnApplicationExpects() {
    assertEquals(-ErrorCodes.ENOENT(), errno(ErrorCode.NOT_FOUND));
    assertEquals(-ErrorCodes.EACCES(), errno(ErrorCode.PERMISSION_DENIED));
    assertEquals(-ErrorCodes.EIO(), errno(ErrorCode.UNAVAILABLE));
    assertEquals(-ErrorCodes.EIO(), errno(ErrorCode.INTERNAL));
    assertEquals(-ErrorCodes.EIO(), FuseErrors.toErrno("read", "/p", new IllegalStateException()));
  }

  @Test
  void listingFailuresWrappedInUncheckedIoAreUnwrapped() {
    assertEquals(
        -ErrorCodes.ENOENT(),
        FuseErrors.toErrno(
            "readdir",
            "/p",
            new UncheckedIOException(new StrataException(ErrorCode.NOT_FOUND, "gone"))));
  }

  @Test
  void aRefusedOperationIsLoggedOncePerKindNotOncePerPath() {
    String kind = "setxattr of security.test-" + System.nanoTime();
    assertTrue(FuseErrors.logUnsupported(kind, "/a"));
    assertFalse(FuseErrors.logUnsupported(kind, "/b"), "the same kind on another path");
    assertFalse(FuseErrors.logUnsupported(kind, "/a"));
    assertTrue(FuseErrors.logUnsupported(kind + "-other", "/a"), "another kind");
  }
}
