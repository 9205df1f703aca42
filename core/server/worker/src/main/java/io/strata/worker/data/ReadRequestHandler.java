package io.strata.worker.data;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.SimpleChannelInboundHandler;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReadStatus;
import io.strata.proto.UfsBlockSource;
import io.strata.worker.block.BlockMeta;
import java.util.ArrayDeque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the read requests of one data channel, one at a time and in order: the next request
 * starts only after every byte of the previous response has been written. Cached blocks are
 * pinned and sent with zero-copy file transfer; misses are streamed from the under store and
 * cached in the background. A bad request gets an error status and leaves the channel usable.
 * All state is touched on the channel's event loop only.
 */
final class ReadRequestHandler extends SimpleChannelInboundHandler<ReadBlockRequest> {
  private static final Logger LOG = LoggerFactory.getLogger(ReadRequestHandler.class);
  /** Requests a client may send ahead before the channel stops reading from its socket. */
  private static final int MAX_QUEUED = 16;

  private final DataServer server;
  private final ArrayDeque<ReadBlockRequest> queued = new ArrayDeque<>();
  private boolean busy;

  ReadRequestHandler(DataServer server) {
    this.server = server;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, ReadBlockRequest request) {
    queued.add(request);
    if (queued.size() >= MAX_QUEUED) {
      ctx.channel().config().setAutoRead(false);
    }
    if (!busy) {
      next(ctx);
    }
  }

  private void next(ChannelHandlerContext ctx) {
    ReadBlockRequest request = queued.poll();
    if (request == null || !ctx.channel().isActive()) {
      busy = false;
      if (!ctx.channel().config().isAutoRead()) {
        ctx.channel().config().setAutoRead(true);
      }
      return;
    }
    busy = true;
    try {
      serve(ctx, request);
    } catch (RuntimeException e) {
      LOG.warn("Read of block {} failed", request.getBlockId(), e);
      respond(ctx, ResponseFrames.status(ReadStatus.READ_ERROR,
          "Block " + request.getBlockId() + ": " + e));
    }
  }

  /** Runs when a response has been written in full (or failed); may come from any thread. */
  private void done(ChannelHandlerContext ctx) {
    if (ctx.executor().inEventLoop()) {
      next(ctx);
    } else {
      ctx.executor().execute(() -> next(ctx));
    }
  }

  private void respond(ChannelHandlerContext ctx, ReadBlockResponse response) {
    ctx.writeAndFlush(ResponseFrames.encode(ctx.alloc(), response))
        .addListener(f -> done(ctx));
  }

  private void serve(ChannelHandlerContext ctx, ReadBlockRequest request) {
    long blockId = request.getBlockId();
    if (request.getShortCircuit()) {
      serveShortCircuit(ctx, request);
      return;
    }
    BlockMeta block = server.store().pin(blockId);
    if (block != null) {
      serveCached(ctx, request, block);
      return;
    }
    UfsBlockSource source = request.getSource();
    if (!request.hasSource() || source.getUfsPath().isEmpty()) {
      respond(ctx, ResponseFrames.status(ReadStatus.READ_INVALID, "Block " + blockId
          + " is not cached on this worker and the request names no under-store source"));
      return;
    }
    String bad = checkRange(request, source.getBlockLength(), source.getUfsPath());
    if (bad != null) {
      respond(ctx, ResponseFrames.status(ReadStatus.READ_INVALID, bad));
      return;
    }
    server.metrics().miss();
    if (server.cacheOnMiss() && !request.getSkipCache()) {
      server.cacher().request(blockId, source);
    }
    new UfsRangeTransfer(ctx.channel(), server.mountedStores(), source, blockId,
        request.getOffset(), request.getLength(), server.chunkSize(), server.ufsExecutor(),
        server.metrics(), () -> done(ctx)).start();
  }

  private void serveShortCircuit(ChannelHandlerContext ctx, ReadBlockRequest request) {
    long blockId = request.getBlockId();
    BlockMeta block = server.store().touch(blockId);
    if (block == null) {
      respond(ctx, ResponseFrames.status(ReadStatus.READ_NOT_CACHED,
          "Block " + blockId + " is not cached on this worker"));
      return;
    }
    String bad = checkRange(request, block.length(), block.path().toString());
    if (bad != null) {
      respond(ctx, ResponseFrames.status(ReadStatus.READ_INVALID, bad));
      return;
    }
    server.metrics().hit();
    server.metrics().cacheBytes(request.getLength());
    respond(ctx, ReadBlockResponse.newBuilder().setStatus(ReadStatus.READ_OK)
        .setFromCache(true).setLocalPath(block.path().toAbsolutePath().toString())
        .setBlockLength(block.length()).setLength(0).build());
  }

  private void serveCached(ChannelHandlerContext ctx, ReadBlockRequest request,
      BlockMeta block) {
    String bad = checkRange(request, block.length(), block.path().toString());
    if (bad != null) {
      server.store().unpin(block);
      respond(ctx, ResponseFrames.status(ReadStatus.READ_INVALID, bad));
      return;
    }
    server.metrics().hit();
    long length = request.getLength();
    ReadBlockResponse header = ReadBlockResponse.newBuilder().setStatus(ReadStatus.READ_OK)
        .setFromCache(true).setLength(length).build();
    ChannelFuture last;
    if (length == 0) {
      last = ctx.writeAndFlush(ResponseFrames.encode(ctx.alloc(), header));
    } else {
      ctx.write(ResponseFrames.encode(ctx.alloc(), header));
      last = ctx.writeAndFlush(new DefaultFileRegion(block.path().toFile(),
          request.getOffset(), length));
    }
    // The pin lasts until the bytes are out or the channel fails, never longer.
    last.addListener(f -> {
      server.store().unpin(block);
      if (f.isSuccess()) {
        server.metrics().cacheBytes(length);
      }
      done(ctx);
    });
  }

  /** Null when the request's range lies inside a block of that length, else why not. */
  private static String checkRange(ReadBlockRequest request, long blockLength, String where) {
    long offset = request.getOffset();
    long length = request.getLength();
    if (offset < 0 || length < 0 || offset > blockLength || length > blockLength - offset) {
      return "Range [" + offset + ", " + (offset + length) + ") is outside block "
          + request.getBlockId() + " of " + blockLength + " bytes (" + where
          + "); ask for a range within the block";
    }
    return null;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    queued.clear();
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("Closing data channel {}: {}", ctx.channel().remoteAddress(), cause.toString());
    ctx.close();
  }
}
