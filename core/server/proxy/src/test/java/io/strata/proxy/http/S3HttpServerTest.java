package io.strata.proxy.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The proxy's HTTP server alone: pipelined requests, streamed bodies, 100-continue. */
class S3HttpServerTest {
  private S3HttpServer server;

  private void start(ExchangeHandler handler) throws Exception {
    server =
        new S3HttpServer(
            new S3HttpServer.Settings(
                "127.0.0.1", 0, 1, 4, 8, 64 << 10, 256 << 10, Duration.ofSeconds(30), null),
            handler,
            exchange ->
                exchange.respond(
                    HttpResponseStatus.SERVICE_UNAVAILABLE, new DefaultHttpHeaders(), null));
    server.start();
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  /** Answers with the request's URI and the SHA-256 of its body, read slowly. */
  private static void echo(HttpExchange exchange) throws Exception {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    byte[] buf = new byte[1000];
    long total = 0;
    int n;
    InputStream body = exchange.body();
    while ((n = body.read(buf)) > 0) {
      md.update(buf, 0, n);
      total += n;
    }
    HttpHeaders h = new DefaultHttpHeaders();
    h.set("Content-Type", "text/plain");
    exchange.respond(
        HttpResponseStatus.OK,
        h,
        (exchange.uri() + " " + total + " " + HexFormat.of().formatHex(md.digest()))
            .getBytes(StandardCharsets.UTF_8));
  }

  private static String readResponse(BufferedReader in) throws Exception {
    String status = in.readLine();
    int length = 0;
    String line;
    while ((line = in.readLine()) != null && !line.isEmpty()) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    char[] body = new char[length];
    int read = 0;
    while (read < length) {
      read += in.read(body, read, length - read);
    }
    return status + "|" + new String(body);
  }

  @Test
  void pipelinedRequestsAreAnsweredInOrderOnOneConnection() throws Exception {
    start(S3HttpServerTest::echo);
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      OutputStream out = s.getOutputStream();
      // Three requests in one write: the second with a body.
      out.write(
          ("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
                  + "PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                  + "GET /c HTTP/1.1\r\nHost: x\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      assertTrue(readResponse(in).matches("HTTP/1.1 200 OK\\|/a 0 .*"));
      String b = readResponse(in);
      assertTrue(
          b.startsWith(
              "HTTP/1.1 200 OK|/b 5 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"),
          b);
      assertTrue(readResponse(in).matches("HTTP/1.1 200 OK\\|/c 0 .*"));
    }
  }

  @Test
  void aLargeBodyStreamsThroughASlowReaderWhole() throws Exception {
    start(S3HttpServerTest::echo);
    byte[] data = new byte[5 << 20];
    new Random(4).nextBytes(data);
    String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: " + data.length + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(data);
      out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      assertEquals("HTTP/1.1 200 OK|/big " + data.length + " " + digest, readResponse(in));
    }
  }

  @Test
  void aRequestRefusedBeforeItsBodyIsNeverSentContinue() throws Exception {
    start(
        exchange ->
            exchange.respond(
                HttpResponseStatus.FORBIDDEN,
                new DefaultHttpHeaders(),
                "no".getBytes(StandardCharsets.US_ASCII)));
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      s.getOutputStream()
          .write(
              ("PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
                      + "Expect: 100-continue\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      assertEquals("HTTP/1.1 403 Forbidden|no", readResponse(in));
    }
  }

  @Test
  void aBodyReadAfterExpectContinueGetsContinueFirst() throws Exception {
    start(S3HttpServerTest::echo);
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("PUT /y HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n" + "Expect: 100-continue\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      assertEquals("HTTP/1.1 100 Continue", in.readLine());
      in.readLine();
      out.write("hello".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertTrue(readResponse(in).startsWith("HTTP/1.1 200 OK|/y 5 "));
    }
  }
}
