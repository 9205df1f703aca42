package io.strata.proxy.http;

/**
 * Serves one request on a handler thread: reads what it needs of the body and sends exactly one
 * response (whole or streamed). An exception thrown after a streamed response started aborts the
 * connection; before, the server answers 500 itself.
 */
@FunctionalInterface
public interface ExchangeHandler {
  void handle(HttpExchange exchange) throws Exception;

  /** The answer when no handler thread is free (the queue is full). */
  interface Overload {
    void reject(HttpExchange exchange);
  }
}
