package io.strata.client;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.protobuf.ProtobufDecoder;
import io.netty.handler.codec.protobuf.ProtobufVarint32FrameDecoder;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.strata.proto.ConcatFilesRequest;
import io.strata.proto.ConcatFilesResponse;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReadStatus;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerServiceGrpc;
import io.strata.proto.WorkerState;
import io.strata.proto.WriteFileHeader;
import io.strata.proto.WriteFileRequest;
import io.strata.proto.WriteFileResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stand-in worker: a Netty server that speaks the data protocol of data.proto, serving block
 * ranges from in-memory file contents keyed by under-store path, plus a gRPC WorkerService that
 * accepts writes and concatenations. Tests make it misbehave (close mid-read, reply READ_ERROR,
 * fail a write) and inspect what it was asked.
 */
final class TestWorker implements AutoCloseable {
  /** Small enough that a test's reads cross chunk boundaries. */
  static final int CHECKSUM_CHUNK = 4096;

  final long id;
  private final Map<String, byte[]> contents;
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Channel dataChannel;
  private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final Server rpc;
  private final List<ReadBlockRequest> log;
  private boolean closed;

  final List<ReadBlockRequest> requests = new CopyOnWriteArrayList<>();

  /** Block files to hand out to short-circuit requests. */
  final Map<Long, Path> localBlocks = new ConcurrentHashMap<>();

  /** When set, the next data read sends this many bytes of its range and closes. */
  final AtomicLong closeAfterBytes = new AtomicLong(-1);

  /** When set, the next data read sends this many bytes of its range and then goes silent. */
  final AtomicLong stallAfterBytes = new AtomicLong(-1);

  volatile boolean replyError;

  /**
   * Data reads that get one byte flipped on the way, after the checksums asked for were computed
   * from the right bytes (a fault of the wire or of a buffer, not of the block).
   */
  final java.util.concurrent.atomic.AtomicInteger flipsOnTheWire =
      new java.util.concurrent.atomic.AtomicInteger();

  /** When set, data reads are answered READ_CHANGED with this as the fingerprint now. */
  volatile String changedTo;

  final List<Integer> chunkSizes = new CopyOnWriteArrayList<>();
  volatile WriteFileHeader lastHeader;

  /** When positive, a write fails once it has received this many chunks. */
  volatile int failAfterChunks = -1;

  final CountDownLatch writeCancelled = new CountDownLatch(1);
  final List<ConcatFilesRequest> concatRequests = new CopyOnWriteArrayList<>();

  /** When set, ConcatFiles fails as a store that cannot be reached would. */
  volatile boolean failConcat;

  TestWorker(long id, Map<String, byte[]> contents, List<ReadBlockRequest> log) throws Exception {
    this.id = id;
    this.contents = contents;
    this.log = log;
    dataChannel =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    connections.add(ch);
                    ch.pipeline()
                        .addLast(
                            new ProtobufVarint32FrameDecoder(),
                            new ProtobufDecoder(ReadBlockRequest.getDefaultInstance()),
                            new DataHandler());
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
    rpc =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(new WriteService())
            .build()
            .start();
  }

  WorkerInfo info() {
    return WorkerInfo.newBuilder()
        .setWorkerId(id)
        .setState(WorkerState.WORKER_LIVE)
        .setAddress(address())
        .build();
  }

  WorkerAddress address() {
    return WorkerAddress.newBuilder()
        .setHost("127.0.0.1")
        .setRpcPort(rpc.getPort())
        .setDataPort(((InetSocketAddress) dataChannel.localAddress()).getPort())
        .build();
  }

  /** Bytes asked for by network (not short-circuit) reads. */
  long requestedBytes() {
    return requests.stream()
        .filter(r -> !r.getShortCircuit())
        .mapToLong(ReadBlockRequest::getLength)
        .sum();
  }

  private final class DataHandler extends SimpleChannelInboundHandler<ReadBlockRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ReadBlockRequest req) {
      requests.add(req);
      log.add(req);
      if (req.getShortCircuit()) {
        Path local = localBlocks.get(req.getBlockId());
        if (local == null) {
          send(ctx, reply(ReadStatus.READ_NOT_CACHED, 0).build(), null, false);
        } else {
          send(
              ctx,
              reply(ReadStatus.READ_OK, 0)
                  .setLocalPath(local.toString())
                  .setBlockLength(req.getSource().getBlockLength())
                  .setFromCache(true)
                  .build(),
              null,
              false);
        }
        return;
      }
      String now = changedTo;
      if (now != null) {
        send(
            ctx,
            reply(ReadStatus.READ_CHANGED, 0)
                .setUfsFingerprint(now)
                .setMessage(req.getSource().getUfsPath() + " changed")
                .build(),
            null,
            false);
        return;
      }
      if (replyError) {
        send(ctx, reply(ReadStatus.READ_ERROR, 0).setMessage("disk failed").build(), null, false);
        return;
      }
      byte[] content = contents.get(req.getSource().getUfsPath());
      if (content == null) {
        send(
            ctx,
            reply(ReadStatus.READ_NOT_FOUND, 0)
                .setMessage("no such file " + req.getSource().getUfsPath())
                .build(),
            null,
            false);
        return;
      }
      if (req.getOffset() < 0
          || req.getLength() < 0
          || req.getOffset() + req.getLength() > req.getSource().getBlockLength()) {
        send(
            ctx,
            reply(ReadStatus.READ_INVALID, 0)
                .setMessage("range out of block " + req.getBlockId())
                .build(),
            null,
            false);
        return;
      }
      int from = (int) (req.getSource().getBlockStart() + req.getOffset());
      byte[] data = Arrays.copyOfRange(content, from, from + (int) req.getLength());
      long cut = closeAfterBytes.getAndSet(-1);
      long stall = stallAfterBytes.getAndSet(-1);
      if (stall >= 0) {
        send(
            ctx,
            reply(ReadStatus.READ_OK, data.length).build(),
            Arrays.copyOf(data, (int) Math.min(stall, data.length)),
            false);
      } else if (cut >= 0) {
        send(
            ctx,
            reply(ReadStatus.READ_OK, data.length).build(),
            Arrays.copyOf(data, (int) Math.min(cut, data.length)),
            true);
      } else {
        ReadBlockResponse.Builder header = reply(ReadStatus.READ_OK, data.length);
        if (req.getWantChecksums()) {
          header.setChecksumChunkSize(CHECKSUM_CHUNK);
          for (int crc : pieceChecksums(req.getOffset(), data)) {
            header.addPieceChecksums(crc);
          }
        }
        if (data.length > 0 && flipsOnTheWire.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
          data[data.length / 2] ^= 0x10;
        }
        send(ctx, header.build(), data, false);
      }
    }

    private int[] pieceChecksums(long offset, byte[] data) {
      try {
        return io.strata.common.BlockChecksums.pieces(
            offset,
            data.length,
            CHECKSUM_CHUNK,
            (at, n) -> {
              java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
              crc.update(data, (int) (at - offset), n);
              return (int) crc.getValue();
            });
      } catch (java.io.IOException e) {
        throw new IllegalStateException(e);
      }
    }

    private ReadBlockResponse.Builder reply(ReadStatus status, long length) {
      return ReadBlockResponse.newBuilder().setStatus(status).setLength(length);
    }

    private void send(
        ChannelHandlerContext ctx, ReadBlockResponse header, byte[] data, boolean thenClose) {
      byte[] h = header.toByteArray();
      ByteBuf out = ctx.alloc().buffer(5 + h.length + (data == null ? 0 : data.length));
      int v = h.length;
      while ((v & ~0x7f) != 0) {
        out.writeByte((v & 0x7f) | 0x80);
        v >>>= 7;
      }
      out.writeByte(v);
      out.writeBytes(h);
      if (data != null) {
        out.writeBytes(data);
      }
      if (thenClose) {
        ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
      } else {
        // A failed write reaches the client as a broken connection; nothing here waits for it.
        var unused = ctx.writeAndFlush(out);
      }
    }
  }

  private final class WriteService extends WorkerServiceGrpc.WorkerServiceImplBase {
    /** Joins the contents of the sources into the target, in memory and in its file. */
    @Override
    public void concatFiles(ConcatFilesRequest r, StreamObserver<ConcatFilesResponse> out) {
      concatRequests.add(r);
      if (failConcat) {
        out.onError(Status.UNAVAILABLE.withDescription("store unreachable").asRuntimeException());
        return;
      }
      ByteArrayOutputStream joined = new ByteArrayOutputStream();
      for (String source : r.getSourceUfsPathsList()) {
        byte[] content = contents.get(source);
        if (content == null) {
          out.onError(Status.NOT_FOUND.withDescription(source).asRuntimeException());
          return;
        }
        joined.writeBytes(content);
      }
      byte[] bytes = joined.toByteArray();
      try {
        Path target = Path.of(r.getUfsPath().substring("file://".length()));
        Files.createDirectories(target.getParent());
        Files.write(target, bytes);
      } catch (IOException e) {
        out.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
        return;
      }
      contents.put(r.getUfsPath(), bytes);
      out.onNext(
          ConcatFilesResponse.newBuilder()
              .setLength(bytes.length)
              .setUfsFingerprint(bytes.length + ":joined")
              .build());
      out.onCompleted();
    }

    @Override
    public StreamObserver<WriteFileRequest> writeFile(StreamObserver<WriteFileResponse> out) {
      return new StreamObserver<>() {
        private final ByteArrayOutputStream data = new ByteArrayOutputStream();
        private WriteFileHeader header;
        private int chunks;
        private boolean failed;

        @Override
        public void onNext(WriteFileRequest r) {
          if (failed) {
            return;
          }
          if (r.hasHeader()) {
            header = r.getHeader();
            lastHeader = header;
            return;
          }
          ByteString chunk = r.getChunk();
          chunkSizes.add(chunk.size());
          data.writeBytes(chunk.toByteArray());
          chunks++;
          if (failAfterChunks > 0 && chunks >= failAfterChunks) {
            failed = true;
            out.onError(
                Status.RESOURCE_EXHAUSTED.withDescription("disk full").asRuntimeException());
          }
        }

        @Override
        public void onError(Throwable t) {
          writeCancelled.countDown();
        }

        @Override
        public void onCompleted() {
          if (failed) {
            return;
          }
          byte[] bytes = data.toByteArray();
          try {
            Path target = Path.of(header.getUfsPath().substring("file://".length()));
            Files.createDirectories(target.getParent());
            Files.write(target, bytes);
          } catch (IOException e) {
            out.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
            return;
          }
          contents.put(header.getUfsPath(), bytes);
          out.onNext(
              WriteFileResponse.newBuilder()
                  .setLength(bytes.length)
                  .setUfsFingerprint(bytes.length + ":written")
                  .build());
          out.onCompleted();
        }
      };
    }
  }

  /** Stops the worker as a crash would: connections drop, ports close. */
  @Override
  public synchronized void close() throws InterruptedException {
    if (closed) {
      return;
    }
    closed = true;
    rpc.shutdownNow();
    dataChannel.close().sync();
    connections.close().sync();
    group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
    rpc.awaitTermination();
  }
}
