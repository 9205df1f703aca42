package io.strata.shell;

/**
 * A command used wrongly in a way picocli cannot see (a directory given to cp without -R, a
 * launcher variable missing); reported as one line with exit code 2.
 */
public final class UsageException extends RuntimeException {
  public UsageException(String message) {
    super(message);
  }
}
