package io.strata.worker.data;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.SimpleChannelInboundHandler;
import io.strata.common.BlockChecksums;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReadStatus;
import io.strata.proto.UfsBlockSource;
import io.strata.worker.block.BlockMeta;
import io.strata.worker.block.BlockVerifier;
import java.io.IOException;
import java.util.ArrayDeque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the read requests of one data channel, one at a time and in order: the next request starts
 * only after every byte of the previous response has been written. Cached blocks are pinned and
 * sent with zero-copy file transfer; a miss of a small block or of a block's start is answered from
 * the copy that caches the block ({@link BlockCacher#serve}), other misses are streamed from the
 * under store while the block is cached in the background. A bad request gets an error status and
 * leaves the channel usable. All state is touched on the channel's event loop only.
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
      if (busy) {
        server.requestsDone();
      }
      busy = false;
      if (!ctx.channel().config().isAutoRead()) {
        ctx.channel().config().setAutoRead(true);
      }
      return;
    }
    if (!busy) {
      server.requestStarted();
    }
    busy = true;
    try {
      serve(ctx, request);
    } catch (RuntimeException e) {
      LOG.warn("Read of block {} failed", request.getBlockId(), e);
      respond(
          ctx,
          ResponseFrames.status(ReadStatus.READ_ERROR, "Block " + request.getBlockId() + ": " + e));
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
    ctx.writeAndFlush(ResponseFrames.encode(ctx.alloc(), response)).addListener(f -> done(ctx));
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
    serveMiss(ctx, request);
  }

  private void serveMiss(ChannelHandlerContext ctx, ReadBlockRequest request) {
    long blockId = request.getBlockId();
    UfsBlockSource source = request.getSource();
    if (!request.hasSource() || source.getUfsPath().isEmpty()) {
      respond(
          ctx,
          ResponseFrames.status(
              ReadStatus.READ_INVALID,
              "Block "
                  + blockId
                  + " is not cached on this worker and the request names no under-store source"));
      return;
    }
    String bad = checkRange(request, source.getBlockLength(), source.getUfsPath());
    if (bad != null) {
      respond(ctx, ResponseFrames.status(ReadStatus.READ_INVALID, bad));
      return;
    }
    server.metrics().miss();
    boolean cache = server.cacheOnMiss() && !request.getSkipCache();
    // The first read of a small block, or of a block's start, is answered from the copy that
    // caches it: the under store is read once, not once for the reader and once for the cache.
    boolean wholeBlock =
        request.getOffset() == 0 || source.getBlockLength() <= server.wholeBlockSize();
    if (cache
        && request.getLength() > 0
        && (wholeBlock || server.cacher().copying(blockId))
        && server.cacher().serve(blockId, source, new CopyWaiter(ctx, request))) {
      return;
    }
    if (cache) {
      server.cacher().request(blockId, source);
    }
    transferFromUnderStore(ctx, request);
  }

  /** Sends a range read from the under store itself (random reads, or no copy possible). */
  private void transferFromUnderStore(ChannelHandlerContext ctx, ReadBlockRequest request) {
    new UfsRangeTransfer(
            ctx.channel(),
            server.mountedStores(),
            request.getSource(),
            request.getBlockId(),
            request.getOffset(),
            request.getLength(),
            server.chunkSize(),
            server.ufsExecutor(),
            server.metrics(),
            () -> done(ctx))
        .start();
  }

  /**
   * A request answered from the copy of its block: its range read back from the block's file once
   * the copy has written (and checked) it. Called from a copy thread; Netty queues the writes onto
   * the channel's event loop.
   */
  private final class CopyWaiter implements BlockCacher.Waiter {
    private final ChannelHandlerContext ctx;
    private final ReadBlockRequest request;

    CopyWaiter(ChannelHandlerContext ctx, ReadBlockRequest request) {
      this.ctx = ctx;
      this.request = request;
    }

    @Override
    public long offset() {
      return request.getOffset();
    }

    @Override
    public long length() {
      return request.getLength();
    }

    @Override
    public void ready(BlockCacher.BlockBytes block) {
      int length = (int) request.getLength();
      ByteBuf data = ctx.alloc().ioBuffer(length);
      try {
        block.copy(request.getOffset(), length, data);
      } catch (IOException e) {
        data.release();
        respond(
            ctx,
            ResponseFrames.status(
                ReadStatus.READ_ERROR, "Block " + request.getBlockId() + ": " + e.getMessage()));
        return;
      }
      ReadBlockResponse.Builder header =
          ReadBlockResponse.newBuilder()
              .setStatus(ReadStatus.READ_OK)
              .setLength(length)
              .setFromCache(false);
      if (request.getWantChecksums()) {
        // From the bytes about to be sent, which the copy checked as it wrote them.
        header.setChecksumChunkSize(BlockChecksums.CHUNK);
        try {
          for (int crc :
              BlockChecksums.pieces(
                  request.getOffset(),
                  length,
                  BlockChecksums.CHUNK,
                  (at, n) -> {
                    java.util.zip.CRC32C crc32c = new java.util.zip.CRC32C();
                    crc32c.update(data.nioBuffer((int) (at - request.getOffset()), n));
                    return (int) crc32c.getValue();
                  })) {
            header.addPieceChecksums(crc);
          }
        } catch (IOException e) {
          throw new IllegalStateException("checksums of bytes in memory cannot fail", e);
        }
      }
      // The data write below reports how the reply went; nothing waits for the header alone.
      var unused = ctx.write(ResponseFrames.encode(ctx.alloc(), header.build()));
      ctx.writeAndFlush(data)
          .addListener(
              f -> {
                if (f.isSuccess()) {
                  server.metrics().ufsBytes(length);
                }
                done(ctx);
              });
    }

    @Override
    public void failed(ReadStatus status, String message, String fingerprint) {
      respond(
          ctx,
          ReadBlockResponse.newBuilder()
              .setStatus(status)
              .setMessage(message)
              .setUfsFingerprint(fingerprint)
              .build());
    }

    @Override
    public void readElsewhere() {
      transferFromUnderStore(ctx, request);
    }
  }

  private void serveShortCircuit(ChannelHandlerContext ctx, ReadBlockRequest request) {
    long blockId = request.getBlockId();
    BlockMeta block = server.store().touch(blockId);
    if (block == null) {
      respond(
          ctx,
          ResponseFrames.status(
              ReadStatus.READ_NOT_CACHED, "Block " + blockId + " is not cached on this worker"));
      return;
    }
    String bad = checkRange(request, block.length(), block.path().toString());
    if (bad != null) {
      respond(ctx, ResponseFrames.status(ReadStatus.READ_INVALID, bad));
      return;
    }
    server.metrics().hit();
    server.metrics().cacheBytes(request.getLength());
    respond(
        ctx,
        ReadBlockResponse.newBuilder()
            .setStatus(ReadStatus.READ_OK)
            .setFromCache(true)
            .setLocalPath(block.path().toAbsolutePath().toString())
            .setBlockLength(block.length())
            .setLength(0)
            .build());
  }

  private void serveCached(ChannelHandlerContext ctx, ReadBlockRequest request, BlockMeta block) {
    String bad = checkRange(request, block.length(), block.path().toString());
    if (bad != null) {
      server.store().unpin(block);
      respond(ctx, ResponseFrames.status(ReadStatus.READ_INVALID, bad));
      return;
    }
    BlockVerifier.Damage damage =
        server.store().verifier().check(block, request.getOffset(), request.getLength());
    if (damage != null) {
      // Never served: the block is dropped and the read answered as a miss, from the under
      // store (or refused, for a block written to the cache only).
      server.store().unpin(block);
      server.store().dropCorrupted(block, damage.how());
      serveMiss(ctx, request);
      return;
    }
    server.metrics().hit();
    long length = request.getLength();
    ReadBlockResponse.Builder header =
        ReadBlockResponse.newBuilder()
            .setStatus(ReadStatus.READ_OK)
            .setFromCache(true)
            .setLength(length);
    if (request.getWantChecksums()) {
      try {
        BlockVerifier.Pieces pieces =
            server.store().verifier().pieceChecksums(block, request.getOffset(), length);
        if (pieces != null) {
          header.setChecksumChunkSize(pieces.chunkSize());
          for (int crc : pieces.crcs()) {
            header.addPieceChecksums(crc);
          }
        }
      } catch (IOException e) {
        // The range was just checked whole; a file that fails now is sent without checksums,
        // as a block without any is, and the next read's check finds what happened to it.
        LOG.debug("No checksums for block {}: {}", block.blockId(), e.toString());
      }
    }
    ChannelFuture last;
    if (length == 0) {
      last = ctx.writeAndFlush(ResponseFrames.encode(ctx.alloc(), header.build()));
    } else {
      // The data write below reports how the reply went; nothing waits for the header alone.
      var unused = ctx.write(ResponseFrames.encode(ctx.alloc(), header.build()));
      last =
          ctx.writeAndFlush(
              new DefaultFileRegion(block.path().toFile(), request.getOffset(), length));
    }
    // The pin lasts until the bytes are out or the channel fails, never longer.
    last.addListener(
        f -> {
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
      return "Range ["
          + offset
          + ", "
          + (offset + length)
          + ") is outside block "
          + request.getBlockId()
          + " of "
          + blockLength
          + " bytes ("
          + where
          + "); ask for a range within the block";
    }
    return null;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    queued.clear();
    // A request cut off with its channel may never call done(): count the channel idle now.
    if (busy) {
      busy = false;
      server.requestsDone();
    }
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    LOG.debug("Closing data channel {}: {}", ctx.channel().remoteAddress(), cause.toString());
    // The failure is logged above; nothing waits for the close.
    var unused = ctx.close();
  }
}
