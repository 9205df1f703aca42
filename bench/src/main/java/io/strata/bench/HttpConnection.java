package io.strata.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One persistent HTTP/1.1 connection of the S3 benchmark's load generator: sends GET and PUT
 * requests to (presigned) targets and reads each response whole, reading bodies into one reused
 * buffer. Written by hand because the generator shares two cores with the servers it measures: a
 * full client (the SDK, java.net.http) would spend more CPU per request than a cached 20 KiB GET
 * costs the servers, and squeeze every ratio towards 1. Not thread-safe: one connection per load
 * thread, reopened when the server closes it.
 */
final class HttpConnection implements AutoCloseable {
  private final String host;
  private final int port;
  private final byte[] sink = new byte[256 << 10];
  private Socket socket;
  private InputStream in;
  private OutputStream out;

  HttpConnection(String host, int port) {
    this.host = host;
    this.port = port;
  }

  private void open() throws IOException {
    socket = new Socket();
    socket.setTcpNoDelay(true);
    socket.connect(new InetSocketAddress(host, port), 5000);
    socket.setSoTimeout(120_000);
    in = new BufferedInputStream(socket.getInputStream(), 64 << 10);
    out = socket.getOutputStream();
  }

  /** GET of a target (path and query); returns the body's length; fails unless 200 or 206. */
  long get(String target) throws IOException {
    return exchange("GET", target, null, 0);
  }

  /** PUT of {@code length} bytes of {@code body} (repeated as needed); returns the status. */
  long put(String target, byte[] body, long length) throws IOException {
    return exchange("PUT", target, body, length);
  }

  private long exchange(String method, String target, byte[] body, long length) throws IOException {
    for (int attempt = 0; ; attempt++) {
      if (socket == null) {
        open();
      }
      try {
        StringBuilder req =
            new StringBuilder(method)
                .append(' ')
                .append(target)
                .append(" HTTP/1.1\r\nHost: ")
                .append(host)
                .append(':')
                .append(port)
                .append("\r\n");
        if (body != null) {
          req.append("Content-Length: ").append(length).append("\r\n");
        }
        req.append("\r\n");
        out.write(req.toString().getBytes(StandardCharsets.US_ASCII));
        if (body != null) {
          long left = length;
          while (left > 0) {
            int n = (int) Math.min(body.length, left);
            out.write(body, 0, n);
            left -= n;
          }
        }
        out.flush();
        return readResponse(method);
      } catch (IOException e) {
        close();
        if (attempt > 0 || body != null) {
          throw e;
        }
      }
    }
  }

  private long readResponse(String method) throws IOException {
    String status = line();
    if (status == null) {
      throw new IOException("connection closed before a response");
    }
    int code = Integer.parseInt(status.split(" ")[1]);
    long length = -1;
    boolean close = false;
    String h;
    while ((h = line()) != null && !h.isEmpty()) {
      int colon = h.indexOf(':');
      String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = h.substring(colon + 1).trim();
      if (name.equals("content-length")) {
        length = Long.parseLong(value);
      } else if (name.equals("connection") && value.equalsIgnoreCase("close")) {
        close = true;
      }
    }
    long left = length;
    ByteArrayOutputStream error = code >= 300 ? new ByteArrayOutputStream() : null;
    while (left > 0) {
      int n = in.read(sink, 0, (int) Math.min(sink.length, left));
      if (n < 0) {
        throw new IOException("connection closed in a body");
      }
      if (error != null) {
        error.write(sink, 0, n);
      }
      left -= n;
    }
    if (close) {
      close();
    }
    if (code != 200 && code != 206) {
      throw new IOException(
          method
              + " answered "
              + status
              + ": "
              + (error == null ? "" : error.toString(StandardCharsets.UTF_8)));
    }
    return length;
  }

  private String line() throws IOException {
    StringBuilder sb = new StringBuilder();
    int c;
    while ((c = in.read()) >= 0) {
      if (c == '\n') {
        int len = sb.length();
        return len > 0 && sb.charAt(len - 1) == '\r' ? sb.substring(0, len - 1) : sb.toString();
      }
      sb.append((char) c);
    }
    return sb.length() == 0 ? null : sb.toString();
  }

  @Override
  public void close() {
    if (socket != null) {
      try {
        socket.close();
      } catch (IOException e) {
        // closing anyway
      }
      socket = null;
    }
  }
}
