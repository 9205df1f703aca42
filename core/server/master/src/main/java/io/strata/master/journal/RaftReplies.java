package io.strata.master.journal;

import io.strata.common.error.StrataException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.protocol.RaftClientReply;

/** Waits, bounded, for the replies of requests to this master's own Raft server. */
final class RaftReplies {
  /** Longest wait for a request to the Raft server (a commit, a snapshot, a transfer). */
  static final Duration TIMEOUT = Duration.ofSeconds(30);

  private RaftReplies() {}

  /** The innermost cause's message: Ratis wraps the state machine's own errors in several. */
  static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  /** One request to this master's Raft server. */
  interface RaftCall {
    CompletableFuture<RaftClientReply> send() throws IOException;
  }

  /**
   * Sends a request and waits for its reply; every way it can fail becomes UNAVAILABLE saying what
   * could not be done ({@code what}, a verb phrase).
   */
  static RaftClientReply await(RaftCall call, String what) throws StrataException {
    try {
      return call.send().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (IOException e) {
      throw StrataException.unavailable("Cannot " + what + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StrataException.unavailable("Interrupted while trying to " + what, e);
    } catch (ExecutionException e) {
      throw StrataException.unavailable(
          "Cannot " + what + ": " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw StrataException.unavailable(
          "Cannot "
              + what
              + ": nothing was committed within "
              + TIMEOUT.toSeconds()
              + " s (has the group lost its majority?)",
          e);
    }
  }
}
