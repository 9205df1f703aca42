package io.strata.worker.grpc;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Timer;
import io.strata.common.BlockChecksums;
import io.strata.common.BlockIds;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.WriteBlocksHeader;
import io.strata.proto.WriteBlocksRequest;
import io.strata.proto.WriteBlocksResponse;
import io.strata.worker.block.BlockMeta;
import io.strata.worker.block.TempBlock;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.master.MasterLink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client-streamed WriteBlocks call: a file's content cut into blocks of the header's block
 * size, each written to a held block of the store's most durable tier (see {@link
 * TieredBlockStore#createHeldTempBlock}) and committed when full, the last at the end of the
 * stream. The answer comes only after every block is committed and the master has been told,
 * synchronously, that this worker holds them; when that fails, or the call fails or is cancelled,
 * every block of the call is removed, so nothing of it is kept. Block files go through the page
 * cache and are not forced, like every block: a worker process that dies keeps them, a power cut
 * can lose the latest. gRPC delivers one message at a time, so the stream needs no lock.
 */
final class BlockWriteStream implements StreamObserver<WriteBlocksRequest> {
  private static final Logger LOG = LoggerFactory.getLogger(BlockWriteStream.class);

  /**
   * Bytes of a block kept in memory before its space is reserved. A file that ends within them
   * reserves exactly its length; a longer block reserves the whole block size up front, so that a
   * small file with a large block size does not evict a block size of cache.
   */
  static final int EXACT_RESERVATION_BYTES = 4 << 20;

  private final TieredBlockStore store;
  private final MasterLink master;
  private final StreamObserver<WriteBlocksResponse> response;
  private final Timer timer;
  private final long startNanos = System.nanoTime();
  private final List<BlockMeta> committed = new ArrayList<>();
  private WriteBlocksHeader header;
  private long length;
  // The block being written: its bytes so far, and either those bytes held here (no temp
  // block yet) or its temporary file.
  private int blockIndex;
  private long blockBytes;
  private ByteString unreserved = ByteString.EMPTY;
  private TempBlock temp;
  private FileChannel file;
  // The checksums of the block being written, computed from the bytes as they are written.
  private BlockChecksums.Builder checksums;
  private boolean finished;

  BlockWriteStream(
      TieredBlockStore store,
      MasterLink master,
      StreamObserver<WriteBlocksResponse> response,
      Timer timer) {
    this.store = store;
    this.master = master;
    this.response = response;
    this.timer = timer;
  }

  @Override
  public void onNext(WriteBlocksRequest request) {
    if (finished) {
      return;
    }
    try {
      if (header == null) {
        start(request);
      } else if (request.hasHeader()) {
        throw StrataException.invalidArgument(
            "WriteBlocks of data id "
                + header.getDataId()
                + " got a second header; send the header once, then data");
      } else {
        append(request.getChunk());
      }
    } catch (Throwable t) {
      fail(t);
    }
  }

  private void start(WriteBlocksRequest request) throws StrataException {
    if (!request.hasHeader()) {
      throw StrataException.invalidArgument(
          "WriteBlocks must start with a header naming the "
              + "file's data id and block size; the first message carried data");
    }
    WriteBlocksHeader h = request.getHeader();
    // Block ids keep the data id in their upper bits (see BlockIds).
    long maxDataId = Long.MAX_VALUE >>> BlockIds.INDEX_BITS;
    if (h.getDataId() <= 0 || h.getDataId() > maxDataId) {
      throw StrataException.invalidArgument(
          "WriteBlocks header has data_id "
              + h.getDataId()
              + "; it must be between 1 and "
              + maxDataId
              + ": pass the file id CreateFile answered");
    }
    if (h.getBlockSize() <= 0) {
      throw StrataException.invalidArgument(
          "WriteBlocks header of data id "
              + h.getDataId()
              + " has block_size "
              + h.getBlockSize()
              + "; it must be above 0: pass the file's "
              + "block size from CreateFile's answer");
    }
    header = h;
  }

  /** Cuts the chunk at block boundaries; commits every block it fills. */
  private void append(ByteString chunk) throws IOException {
    ByteString rest = chunk;
    while (!rest.isEmpty()) {
      int n = (int) Math.min(header.getBlockSize() - blockBytes, rest.size());
      write(rest.substring(0, n));
      rest = rest.substring(n);
      if (blockBytes == header.getBlockSize()) {
        commitBlock();
      }
    }
  }

  private void write(ByteString part) throws IOException {
    blockBytes += part.size();
    length += part.size();
    if (temp != null) {
      writeToFile(part);
      return;
    }
    unreserved = unreserved.concat(part);
    if (unreserved.size() >= EXACT_RESERVATION_BYTES && blockBytes < header.getBlockSize()) {
      // Long enough to be a large file, whose length is not known: reserve a whole block.
      reserve(header.getBlockSize());
    }
  }

  /** Reserves the block being written and writes into it the bytes kept until now. */
  private void reserve(long bytes) throws IOException {
    long blockId = BlockIds.blockId(header.getDataId(), blockIndex);
    java.util.Optional<io.strata.worker.block.TempBlock> reserved =
        store.createHeldTempBlock(blockId, bytes);
    if (reserved.isEmpty()) {
      // A full disk is named as one (ENOSPC: "No space left on device" through a mount).
      io.strata.common.error.StrataException full =
          store.fileSystemFull(store.durableTierAlias(), blockId, bytes);
      if (full != null) {
        throw full;
      }
      throw noRoom(blockId, bytes);
    }
    temp = reserved.get();
    // This call tells the master itself, before it answers; batched commits would race it.
    temp.callerTellsMaster();
    checksums = BlockChecksums.builder();
    file =
        FileChannel.open(
            temp.path(),
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE);
    writeToFile(unreserved);
    unreserved = ByteString.EMPTY;
  }

  private void writeToFile(ByteString bytes) throws IOException {
    try {
      for (ByteBuffer b : bytes.asReadOnlyByteBufferList()) {
        checksums.update(b);
        while (b.hasRemaining()) {
          file.write(b);
        }
      }
    } catch (IOException e) {
      throw store.writeFailure(temp, e);
    }
  }

  /** No room in the durable tier: RESOURCE_EXHAUSTED, with what to do. */
  private StatusRuntimeException noRoom(long blockId, long bytes) {
    String tier = store.durableTierAlias();
    long capacity = store.capacity(tier);
    String capacityKey = "strata.worker.tier." + tier.toLowerCase(Locale.ROOT) + ".capacity";
    if (bytes > capacity) {
      return Status.RESOURCE_EXHAUSTED
          .withDescription(
              "Block "
                  + blockId
                  + " of data id "
                  + header.getDataId()
                  + " needs "
                  + bytes
                  + " bytes, more than the whole of tier "
                  + tier
                  + " ("
                  + capacity
                  + " bytes), which holds the files written to the cache only. "
                  + "Write the file with a block size of at most "
                  + capacity
                  + " bytes, or give the "
                  + "tier more room ("
                  + capacityKey
                  + ")")
          .asRuntimeException();
    }
    return Status.RESOURCE_EXHAUSTED
        .withDescription(
            "No room for block "
                + blockId
                + " ("
                + bytes
                + " bytes) of data id "
                + header.getDataId()
                + " in tier "
                + tier
                + ", which "
                + "holds the files written to the cache only: "
                + store.heldBytes(tier)
                + " of its "
                + capacity
                + " bytes are held blocks not yet persisted, and blocks being read cannot be "
                + "evicted either. Wait for the master to persist earlier files, persist or delete "
                + "files written ASYNC_THROUGH or MUST_CACHE, or give the tier more room ("
                + capacityKey
                + ")")
        .asRuntimeException();
  }

  private void commitBlock() throws IOException {
    if (temp == null) {
      reserve(blockBytes);
    }
    file.close();
    file = null;
    TempBlock t = temp;
    temp = null;
    committed.add(store.commit(t, blockBytes, checksums.build()));
    blockIndex++;
    blockBytes = 0;
  }

  @Override
  public void onError(Throwable t) {
    if (finished) {
      return;
    }
    finished = true;
    discard();
    LOG.info(
        "WriteBlocks of data id {} was cancelled by the client after {} bytes ({}); "
            + "nothing was kept",
        header == null ? "(no header yet)" : header.getDataId(),
        length,
        t.toString());
    record();
  }

  @Override
  public void onCompleted() {
    if (finished) {
      return;
    }
    if (header == null) {
      fail(StrataException.invalidArgument("WriteBlocks ended before its header"));
      return;
    }
    try {
      if (blockBytes > 0) {
        commitBlock();
      }
      if (!committed.isEmpty()) {
        master.commitHeldBlocks(committed);
      }
    } catch (StrataException e) {
      if (e.code() == ErrorCode.UNAVAILABLE) {
        fail(
            StrataException.unavailable(
                e.getMessage()
                    + ". The write of data id "
                    + header.getDataId()
                    + " was undone: retry it when the master can be reached",
                e));
      } else {
        fail(e);
      }
      return;
    } catch (Throwable t) {
      fail(t);
      return;
    }
    finished = true;
    record();
    WriteBlocksResponse.Builder answer =
        WriteBlocksResponse.newBuilder().setLength(length).setTier(store.durableTierAlias());
    for (BlockMeta b : committed) {
      answer.addBlockIds(b.blockId());
    }
    response.onNext(answer.build());
    response.onCompleted();
  }

  private void fail(Throwable t) {
    finished = true;
    discard();
    StatusRuntimeException status = GrpcErrors.toStatus(t);
    if (status.getStatus().getCode() == Status.Code.INTERNAL) {
      LOG.warn(
          "WriteBlocks of data id {} failed after {} bytes: {}",
          header == null ? "(no header)" : header.getDataId(),
          length,
          t.toString());
    }
    record();
    response.onError(status);
  }

  /** Aborts the block being written and removes the blocks this call committed. */
  private void discard() {
    if (file != null) {
      try {
        file.close();
      } catch (IOException e) {
        LOG.debug("Closing the block file {} failed: {}", temp.path(), e.toString());
      }
      file = null;
    }
    if (temp != null) {
      store.abort(temp);
      temp = null;
    }
    unreserved = ByteString.EMPTY;
    if (!committed.isEmpty()) {
      List<Long> ids = new ArrayList<>(committed.size());
      for (BlockMeta b : committed) {
        ids.add(b.blockId());
      }
      store.remove(ids);
      committed.clear();
    }
  }

  private void record() {
    timer.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
  }
}
