package io.strata.proxy.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.FileRegion;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One HTTP request and its response, as the thread serving it sees them: the request's line and
 * headers exactly as received, its body as a blocking stream ({@link #body()}), and either one
 * whole response ({@link #respond}) or a streamed one ({@link #startResponse}, {@link #write},
 * {@link #endResponse}). A streamed response waits while the connection's write buffer is above its
 * high-water mark, so a slow client holds a bounded amount of the proxy's memory and slows the
 * reads that feed it. After the response, the connection reads the next request when this one's
 * body had arrived whole (what the handler did not read of it is dropped), and is closed otherwise
 * (the rest of a body still on its way cannot be told apart from the next request without reading
 * it); the response says which it will be. A connection closed with a body on its way first takes
 * the rest of it, for a bounded time, so that the client reads the answer rather than a reset.
 */
public final class HttpExchange {
  /**
   * How long a connection that closes after its response keeps taking (and dropping) a request body
   * still on its way: long enough for a client that sends its whole body before it reads the answer
   * to finish, bounded so that a client cannot hold the connection open.
   */
  static final long LINGER_SECONDS = 30;

  private final Channel channel;

  /** On the event loop once the response is sent and the connection kept: the next request. */
  private final Runnable next;

  private final HttpRequest request;
  private final RequestBody body;
  private final long writeTimeoutNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition writable = lock.newCondition();
  private final boolean expectContinue;
  private boolean continueSent;
  private boolean responseStarted;
  private boolean responseEnded;

  /** Headers every response to this request carries too; null for none. */
  private HttpHeaders extraHeaders;

  private boolean closeAfterResponse;
  private boolean keepAlive;
  // What the response told the client, so that the connection does as it said.
  private volatile boolean reuseConnection;
  // Event loop only.
  private boolean draining;
  private long bytesOut;
  private int status;

  HttpExchange(
      Channel channel,
      HttpRequest request,
      long bodyTimeoutNanos,
      long writeTimeoutNanos,
      Runnable next) {
    this.channel = channel;
    this.next = next;
    this.request = request;
    this.writeTimeoutNanos = writeTimeoutNanos;
    this.expectContinue = HttpUtil.is100ContinueExpected(request);
    this.keepAlive = HttpUtil.isKeepAlive(request);
    this.body =
        new RequestBody(
            new RequestBody.Feed() {
              @Override
              public void requestMore() {
                channel.read();
              }

              @Override
              public void continueIfExpected() {
                sendContinue();
              }
            },
            bodyTimeoutNanos);
  }

  public HttpMethod method() {
    return request.method();
  }

  /**
   * Headers the response carries besides its own, whatever it turns out to be (an error too), such
   * as CORS's; to be added before the response starts.
   */
  public void addResponseHeaders(HttpHeaders headers) {
    if (extraHeaders == null) {
      extraHeaders = new DefaultHttpHeaders();
    }
    extraHeaders.add(headers);
  }

  /** The request target as received (percent-encoded path and query). */
  public String uri() {
    return request.uri();
  }

  public HttpHeaders headers() {
    return request.headers();
  }

  /** The client's address, for logs. */
  /** The client's address, or null when the channel has none (an embedded channel in tests). */
  /**
   * Whether the request came over TLS: what bucket policies know as aws:SecureTransport, and why a
   * response must not be sent as a file region (TLS has to encrypt the bytes in user space).
   */
  public boolean secure() {
    return channel.pipeline().get(SslHandler.class) != null;
  }

  public java.net.InetAddress remoteAddress() {
    return channel.remoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
  }

  public String remote() {
    return channel.remoteAddress() instanceof InetSocketAddress a
        ? a.getAddress().getHostAddress() + ":" + a.getPort()
        : String.valueOf(channel.remoteAddress());
  }

  /**
   * The request body; the first read sends "100 Continue" when the client asked for it, so a
   * request refused before its body is read is never sent its body.
   */
  public InputStream body() {
    return body;
  }

  /** Bytes of request body received so far. */
  public long bytesIn() {
    return body.received();
  }

  /** Bytes of response body sent so far. */
  public long bytesOut() {
    return bytesOut;
  }

  /** The response status sent, or 0 before a response started. */
  public int status() {
    return status;
  }

  public boolean responseStarted() {
    return responseStarted;
  }

  public ByteBufAllocator alloc() {
    return channel.alloc();
  }

  /** Closes the connection after this response, whatever happens to the request body. */
  public void closeAfterResponse() {
    closeAfterResponse = true;
  }

  RequestBody requestBody() {
    return body;
  }

  private void sendContinue() {
    if (expectContinue && !continueSent && !responseStarted) {
      continueSent = true;
      // A failed write closes the connection, which the response's own writes then report.
      var unused =
          channel.writeAndFlush(
              new DefaultFullHttpResponse(
                  HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER));
    }
  }

  /**
   * Sends a whole response. {@code content} may be null (no body). For HEAD requests, the body is
   * not sent but Content-Length says how long it would be unless the headers give it.
   */
  public void respond(HttpResponseStatus status, HttpHeaders headers, byte[] content) {
    checkNotStarted();
    responseStarted = true;
    this.status = status.code();
    byte[] bytes = content == null ? new byte[0] : content;
    boolean head = request.method().equals(HttpMethod.HEAD);
    FullHttpResponse r =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            status,
            head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(bytes));
    r.headers().set(headers);
    if (!r.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
      HttpUtil.setContentLength(r, bytes.length);
    }
    bytesOut += head ? 0 : bytes.length;
    responseEnded = true;
    finish(channel.writeAndFlush(prepare(r)));
  }

  /** Starts a streamed response of {@code contentLength} bytes. */
  public void startResponse(HttpResponseStatus status, HttpHeaders headers, long contentLength) {
    checkNotStarted();
    responseStarted = true;
    this.status = status.code();
    HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, status);
    r.headers().set(headers);
    HttpUtil.setContentLength(r, contentLength);
    // The writes that follow report a failure as a closed connection; nothing waits for the
    // headers alone.
    var unused = channel.write(prepare(r));
  }

  /**
   * Sends the next part of a streamed response, taking ownership of {@code data}; waits while the
   * client is slow to take what was sent before.
   *
   * @throws IOException when the connection closed or the client took nothing for the write timeout
   */
  public void write(ByteBuf data) throws IOException {
    if (!channel.isActive()) {
      data.release();
      throw new IOException("the client at " + remote() + " closed the connection");
    }
    bytesOut += data.readableBytes();
    // A failed write closes the connection, which the next write or the end reports.
    var unused = channel.writeAndFlush(new DefaultHttpContent(data));
    awaitWritable();
  }

  /**
   * Sends the next part of a streamed response from a file, by the kernel where the transport can
   * (sendfile); takes ownership of {@code region} (its file is closed once sent). Waits as {@link
   * #write(ByteBuf)} does.
   */
  public void write(FileRegion region) throws IOException {
    if (!channel.isActive()) {
      region.release();
      throw new IOException("the client at " + remote() + " closed the connection");
    }
    bytesOut += region.count();
    // A failed write closes the connection, which the next write or the end reports.
    var unused = channel.writeAndFlush(region);
    awaitWritable();
  }

  /** Ends a streamed response. */
  public void endResponse() {
    responseEnded = true;
    finish(channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT));
  }

  /**
   * Ends the exchange after a failure in the middle of a streamed response: the client sees the
   * connection close before Content-Length bytes arrived, which every client treats as an error,
   * rather than a short body it could take for the whole.
   */
  public void abort() {
    responseEnded = true;
    closeChannel();
  }

  private void awaitWritable() throws IOException {
    if (channel.isWritable()) {
      return;
    }
    long deadline = System.nanoTime() + writeTimeoutNanos;
    lock.lock();
    try {
      while (!channel.isWritable()) {
        if (!channel.isActive()) {
          throw new IOException("the client at " + remote() + " closed the connection");
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          closeChannel();
          throw new IOException(
              "the client at "
                  + remote()
                  + " took nothing for "
                  + TimeUnit.NANOSECONDS.toSeconds(writeTimeoutNanos)
                  + " s");
        }
        writable.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting for the client");
    } finally {
      lock.unlock();
    }
  }

  /** Event loop: the connection's writability or liveness changed. */
  void signal() {
    lock.lock();
    try {
      writable.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private HttpResponse prepare(HttpResponse r) {
    if (extraHeaders != null) {
      r.headers().add(extraHeaders);
    }
    boolean reuse = keepAlive && !closeAfterResponse && body.ended();
    reuseConnection = reuse;
    if (!reuse) {
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    } else if (request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
    }
    return r;
  }

  /**
   * After the last write: read the next request when the response said the connection stays open --
   * this request's body had arrived whole, so what the handler did not read of it is dropped and
   * the next bytes are the next request -- and close the connection otherwise.
   */
  private void finish(ChannelFuture written) {
    channel
        .eventLoop()
        .execute(
            () -> {
              boolean reuse = reuseConnection;
              boolean bodyOnItsWay = !body.ended();
              body.close();
              if (reuse) {
                written.addListener(
                    f -> {
                      if (f.isSuccess()) {
                        next.run();
                      } else {
                        closeChannel();
                      }
                    });
              } else if (bodyOnItsWay && channel instanceof DuplexChannel duplex) {
                written.addListener(
                    f -> {
                      if (!f.isSuccess()) {
                        closeChannel();
                        return;
                      }
                      // Closing with the client's bytes unread would reset the connection, and a
                      // client
                      // still sending its body would lose the answer before reading it (a refused
                      // PUT
                      // sent without "Expect: 100-continue"). So: end the response side, drop what
                      // still
                      // comes, and close when the client does or the body ends.
                      duplex
                          .shutdownOutput()
                          .addListener(
                              x -> {
                                draining = true;
                                // The linger ends in a close whatever else happens; nothing
                                // waits for it.
                                var unused =
                                    channel
                                        .eventLoop()
                                        .schedule(
                                            this::closeChannel, LINGER_SECONDS, TimeUnit.SECONDS);
                                channel.read();
                              });
                    });
              } else {
                written.addListener(ChannelFutureListener.CLOSE);
              }
            });
  }

  /**
   * Event loop: whether the response was sent and the connection only takes the rest of the
   * request's body to drop it before it closes.
   */
  boolean draining() {
    return draining;
  }

  /** Whether the response has been sent whole (or the exchange aborted). */
  boolean done() {
    return responseEnded;
  }

  private void closeChannel() {
    // Closing ends the exchange whatever comes of it; nothing waits for the close.
    var unused = channel.close();
  }

  private void checkNotStarted() {
    if (responseStarted) {
      throw new IllegalStateException("a response was already started for " + request.uri());
    }
  }
}
