package io.strata.server.common;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.strata.common.DaemonThreads;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

/**
 * The HTTP endpoint of a server process: {@code /metrics} in Prometheus text form and {@code
 * /health}. The JDK's built-in server is enough for a scrape every few seconds and adds no
 * dependency.
 */
public final class WebServer implements AutoCloseable {
  private final HttpServer server;

  public WebServer(String bindHost, int port, PrometheusMeterRegistry registry) throws IOException {
    server = HttpServer.create(new InetSocketAddress(bindHost, port), 16);
    server.createContext(
        "/metrics",
        ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape()));
    server.createContext("/health", ex -> respond(ex, 200, "text/plain", "ok\n"));
    server.setExecutor(Executors.newFixedThreadPool(2, DaemonThreads.named("web-server")));
    server.start();
  }

  private static void respond(HttpExchange ex, int code, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  /** The port bound, which differs from the configured one when that was 0. */
  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
