package io.strata.proxy.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event-loop side of one connection: hands each request to a handler thread as an {@link
 * HttpExchange} and feeds it the request's body as it arrives. The connection reads from its socket
 * only when asked (auto-read is off): once for the first request, then when an exchange's body
 * stream wants more, then after a response for the next request. So one connection serves one
 * request at a time and holds at most one socket read of its body.
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionHandler.class);

  private final ExecutorService handlers;
  private final ExchangeHandler handler;
  private final ExchangeHandler.Overload overload;
  private final long bodyTimeoutNanos;
  private final long writeTimeoutNanos;
  private HttpExchange current;

  /** An exchange has started and not finished: new requests wait in the backlog. */
  private boolean busy;

  private final java.util.ArrayDeque<Object> backlog = new java.util.ArrayDeque<>();

  ConnectionHandler(
      ExecutorService handlers,
      ExchangeHandler handler,
      ExchangeHandler.Overload overload,
      long bodyTimeoutNanos,
      long writeTimeoutNanos) {
    this.handlers = handlers;
    this.handler = handler;
    this.overload = overload;
    this.bodyTimeoutNanos = bodyTimeoutNanos;
    this.writeTimeoutNanos = writeTimeoutNanos;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    ctx.read();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (current != null && current.draining()) {
      // The answer was sent; the rest of the request's body is dropped until it ends.
      ReferenceCountUtil.release(msg);
      if (msg instanceof LastHttpContent || msg instanceof HttpRequest) {
        // The answer is already out; nothing waits for the close.
        var unused = ctx.close();
      } else {
        ctx.read();
      }
      return;
    }
    // A client that pipelines sends the next request before this one's answer; it waits, with
    // its body, until this exchange is over, so that answers go out in order.
    if (busy && (msg instanceof HttpRequest || !backlog.isEmpty())) {
      backlog.add(msg);
      return;
    }
    process(ctx, msg);
  }

  /** Event loop: the exchange is over and the connection kept; serves what waited, or reads. */
  private void next(ChannelHandlerContext ctx) {
    busy = false;
    current = null;
    while (!backlog.isEmpty() && !busy) {
      process(ctx, backlog.poll());
    }
    while (!backlog.isEmpty() && !(backlog.peek() instanceof HttpRequest)) {
      process(ctx, backlog.poll());
    }
    if (!busy) {
      ctx.read();
    }
  }

  private void process(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpRequest request) {
      if (request.decoderResult().isFailure()) {
        ReferenceCountUtil.release(msg);
        badRequest(ctx, request.decoderResult().cause());
        return;
      }
      HttpExchange exchange =
          new HttpExchange(
              ctx.channel(), request, bodyTimeoutNanos, writeTimeoutNanos, () -> next(ctx));
      current = exchange;
      busy = true;
      if (msg instanceof HttpContent content) {
        exchange.requestBody().offer(content);
      }
      try {
        handlers.execute(() -> serve(exchange));
      } catch (RejectedExecutionException e) {
        exchange.closeAfterResponse();
        overload.reject(exchange);
      }
      return;
    }
    if (msg instanceof HttpContent content) {
      if (content.decoderResult().isFailure()) {
        content.release();
        // A malformed body ends the connection; nothing waits for the close.
        var unused = ctx.close();
        return;
      }
      if (current != null) {
        current.requestBody().offer(content);
      } else {
        content.release();
      }
      return;
    }
    ReferenceCountUtil.release(msg);
  }

  private void serve(HttpExchange exchange) {
    try {
      handler.handle(exchange);
      if (!exchange.done()) {
        if (exchange.responseStarted()) {
          exchange.abort();
        } else {
          LOG.warn(
              "No response to {} {}: closing the connection", exchange.method(), exchange.uri());
          exchange.closeAfterResponse();
          exchange.respond(
              HttpResponseStatus.INTERNAL_SERVER_ERROR,
              io.netty.handler.codec.http.EmptyHttpHeaders.INSTANCE,
              null);
        }
      }
    } catch (Throwable t) {
      LOG.warn(
          "Request {} {} from {} failed", exchange.method(), exchange.uri(), exchange.remote(), t);
      if (!exchange.responseStarted()) {
        exchange.closeAfterResponse();
        exchange.respond(
            HttpResponseStatus.INTERNAL_SERVER_ERROR,
            io.netty.handler.codec.http.EmptyHttpHeaders.INSTANCE,
            null);
      } else if (!exchange.done()) {
        exchange.abort();
      }
    }
  }

  private static void badRequest(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("Malformed request from {}: {}", ctx.channel().remoteAddress(), cause.toString());
    DefaultFullHttpResponse r =
        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST);
    r.headers()
        .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE)
        .setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
    ctx.writeAndFlush(r).addListener(io.netty.channel.ChannelFutureListener.CLOSE);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (current != null) {
      current.signal();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    Object waiting;
    while ((waiting = backlog.poll()) != null) {
      ReferenceCountUtil.release(waiting);
    }
    if (current != null) {
      current.requestBody().fail(new IOException("the client closed the connection"));
      current.signal();
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent) {
      // An idle connection is dropped; nothing waits for the close.
      var unused = ctx.close();
    }
    ReferenceCountUtil.release(evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("Connection from {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
    // The failure is logged above; nothing waits for the close.
    var unused = ctx.close();
  }
}
