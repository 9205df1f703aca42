package io.strata.journal;

/**
 * A journal tool stopped without doing its job for a reason the user can act on; the message says
 * what and what to do, and {@link #exitCode()} is the process exit code.
 */
final class ToolFailure extends RuntimeException {
  private final int exitCode;

  ToolFailure(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  int exitCode() {
    return exitCode;
  }
}
