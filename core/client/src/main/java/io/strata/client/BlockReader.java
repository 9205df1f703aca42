package io.strata.client;

import io.strata.client.data.DataTransferException;
import io.strata.common.BlockChecksums;
import io.strata.common.BlockIds;
import io.strata.common.WorkerHashing;
import io.strata.common.conf.ClientKeys;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.BlockInfo;
import io.strata.proto.BlockLocation;
import io.strata.proto.FileInfo;
import io.strata.proto.GetFileBlocksRequest;
import io.strata.proto.GetFileBlocksResponse;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReadStatus;
import io.strata.proto.UfsBlockSource;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerInfo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The positioned read path of one open file: splits a range at block boundaries and reads each
 * piece from the best source, failing over from worker to worker and at last to the under store.
 *
 * <p>Guarantees: {@link #read} fills exactly the range asked for, or throws; a worker that fails
 * mid-range never causes bytes to be skipped or delivered twice, because the next source is asked
 * only for the part not yet received (or for the whole piece again, when the bytes received cannot
 * be vouched for). Any number of threads may call {@link #read} at once: there is no lock on the
 * path, only concurrent maps and sets for the state they share (workers that failed for this file,
 * open short-circuit files, the block list).
 *
 * <p>Source order for a block: the live workers ranked by {@link WorkerHashing} (the first is the
 * block's home), except that when the home does not hold the block but another worker does, that
 * worker goes first. A worker on this host is read by short-circuit when it holds the block.
 *
 * <p>A file with an under-store fingerprint is read only as the version it was opened on, even when
 * it is rewritten in its under store meanwhile: cached blocks belong to that version (a rewritten
 * file gets new block ids), workers reading the under store and the direct fallback check the
 * fingerprint, and a "changed" answer fails the read instead of being retried elsewhere. A worker
 * that finds the change mid-transfer can only close the channel; before the bytes it sent are kept,
 * the under store is asked whether the file is still that version.
 */
final class BlockReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockReader.class);

  private final ClientContext ctx;
  private final FileInfo file;
  private final boolean shortCircuit;
  private final boolean ufsFallback;
  private volatile List<BlockInfo> blocks;

  /** Workers that failed a read of this file; not asked again by this stream. */
  private final Set<Long> failedWorkers = ConcurrentHashMap.newKeySet();

  /** Block files of a worker on this host, open for the stream's life. */
  private final Map<Long, LocalBlockFile> localFiles = new ConcurrentHashMap<>();

  /** Blocks the local worker said it does not hold; asked again once it serves one from cache. */
  private final Set<Long> notLocal = ConcurrentHashMap.newKeySet();

  private final AtomicBoolean refreshing = new AtomicBoolean();
  private volatile boolean closed;

  private record Source(long workerId, WorkerAddress address, boolean holds) {}

  BlockReader(ClientContext ctx, FileInfo file, List<BlockInfo> blocks) throws StrataException {
    this.ctx = ctx;
    this.file = file;
    this.blocks = complete(file, blocks);
    this.shortCircuit = ctx.conf.getBoolean(ClientKeys.SHORT_CIRCUIT);
    this.ufsFallback = ctx.conf.getBoolean(ClientKeys.UFS_FALLBACK);
  }

  /**
   * The block list indexed by block number. The master lists every block; should a list come back
   * short, the missing blocks are derived from the file's length and block size (block ids are a
   * function of file id and index), so a read never depends on the list being whole.
   */
  static List<BlockInfo> complete(FileInfo file, List<BlockInfo> given) throws StrataException {
    long length = file.getLength();
    long blockSize = file.getBlockSize();
    if (length == 0) {
      return List.of();
    }
    if (blockSize <= 0) {
      throw new StrataException(
          ErrorCode.INTERNAL,
          "The master reported block size "
              + blockSize
              + " for "
              + file.getPath()
              + "; cannot read it");
    }
    int count = BlockIds.blockCount(length, blockSize);
    BlockInfo[] byIndex = new BlockInfo[count];
    for (BlockInfo b : given) {
      long index = b.getOffset() / blockSize;
      if (index < count && b.getOffset() == index * blockSize) {
        byIndex[(int) index] = b;
      }
    }
    List<BlockInfo> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      BlockInfo b = byIndex[i];
      if (b == null) {
        long offset = i * blockSize;
        b =
            BlockInfo.newBuilder()
                .setBlockId(BlockIds.blockId(file.getFileId(), i))
                .setOffset(offset)
                .setLength(Math.min(blockSize, length - offset))
                .build();
      }
      out.add(b);
    }
    return List.copyOf(out);
  }

  /**
   * Whether a read at {@code position} (in the file) will be served by short-circuit from a
   * worker's block file on this machine that this reader has already mapped. Such a read is a
   * memory copy, as cheap as any cache in front of it.
   */
  boolean readsLocally(long position) {
    BlockInfo block = blocks.get((int) (position / file.getBlockSize()));
    long id = block.getBlockId();
    if (localFiles.containsKey(id)) {
      return true;
    }
    if (!shortCircuit || notLocal.contains(id) || closed) {
      return false;
    }
    try {
      if (openDirect(block) != null) {
        return true;
      }
      if (ctx.localTiers.visible()) {
        // Not cached here: no read of this block looks for its file again until a worker
        // serves it from its cache (see readFrom).
        notLocal.add(id);
      }
      return false;
    } catch (StrataException e) {
      return false;
    }
  }

  /**
   * Opens a block's file in the tier folders of a worker on this machine, with no call to it, and
   * keeps it open for the stream; null when no visible tier holds the block.
   */
  private LocalBlockFile openDirect(BlockInfo block) throws StrataException {
    long id = block.getBlockId();
    LocalBlockFile opened = ctx.localTiers.open(id, block.getLength());
    if (opened == null) {
      return null;
    }
    LocalBlockFile kept = keep(id, opened);
    if (kept == opened) {
      ctx.localReads.opened(opened.workerId(), opened.worker(), id);
    }
    return kept;
  }

  /** Tells the worker whose folder a file was opened in (without asking it) of bytes read. */
  private void reportRead(LocalBlockFile local, long bytes) {
    if (local.worker() != null) {
      ctx.localReads.read(local.workerId(), local.worker(), bytes);
    }
  }

  /**
   * Keeps a block file open for the stream's life; returns the one kept (another thread's, when it
   * opened the block first), or null when the stream was closed meanwhile.
   */
  private LocalBlockFile keep(long id, LocalBlockFile opened) {
    LocalBlockFile prior = localFiles.putIfAbsent(id, opened);
    if (prior != null) {
      opened.close();
      return prior;
    }
    if (closed && localFiles.remove(id, opened)) {
      opened.close();
      return null;
    }
    return opened;
  }

  /**
   * Reads {@code dst.remaining()} bytes at {@code position} from block files of a worker on this
   * machine, when every block the range touches is one ({@link #readsLocally}); false, with nothing
   * read, when one is not. With a direct {@code dst}, each byte is copied once.
   */
  boolean readLocally(long position, ByteBuffer dst) throws IOException {
    int len = dst.remaining();
    if (len == 0) {
      return true;
    }
    long last = position + len - 1;
    long blockSize = file.getBlockSize();
    for (long b = position / blockSize; b <= last / blockSize; b++) {
      if (!readsLocally(b * blockSize)) {
        return false;
      }
    }
    int start = dst.position();
    long pos = position;
    while (dst.hasRemaining()) {
      checkOpen();
      BlockInfo block = blocks.get((int) (pos / blockSize));
      long inBlock = pos - block.getOffset();
      int n = (int) Math.min(dst.remaining(), block.getLength() - inBlock);
      LocalBlockFile local = localFiles.get(block.getBlockId());
      ByteBuffer piece = dst.slice(dst.position(), n);
      boolean read;
      try {
        read = local != null && local.read(inBlock, piece);
      } catch (IOException e) {
        // Damaged or gone: the block is read through a worker from now on.
        dropLocal(block.getBlockId(), local, e);
        read = false;
      }
      if (!read) {
        // Closed under us: the caller reads the whole range another way.
        dst.position(start);
        return false;
      }
      reportRead(local, n);
      dst.position(dst.position() + n);
      pos += n;
    }
    ctx.metrics.addShortCircuit(len);
    return true;
  }

  /**
   * The block file of a worker on this machine that holds the byte at {@code position}, with the
   * range of it that belongs to the file from there, up to {@code maxLength} bytes; null when that
   * block is not read by short-circuit ({@link #readsLocally}). The bytes are counted as read from
   * the worker's cache.
   */
  LocalSegment localSegment(long position, long maxLength) {
    if (!readsLocally(position)) {
      return null;
    }
    BlockInfo block = blocks.get((int) (position / file.getBlockSize()));
    LocalBlockFile local = localFiles.get(block.getBlockId());
    if (local == null) {
      return null;
    }
    long inBlock = position - block.getOffset();
    long n = Math.min(maxLength, block.getLength() - inBlock);
    // The segment's bytes go out without passing through this process (sendfile): they are
    // verified against the block's checksums first.
    try {
      if (!local.verify(inBlock, n)) {
        return null;
      }
    } catch (IOException e) {
      dropLocal(block.getBlockId(), local, e);
      return null;
    }
    reportRead(local, n);
    ctx.metrics.addShortCircuit(n);
    return new LocalSegment(local.path(), inBlock, n);
  }

  /** Stops reading a block file of this machine that failed a read; a worker serves it now. */
  private void dropLocal(long id, LocalBlockFile local, IOException why) {
    LOG.warn(
        "Short-circuit read of block {} failed ({}); reading it through the worker",
        id,
        why.getMessage());
    if (localFiles.remove(id, local)) {
      local.close();
    }
    notLocal.add(id);
  }

  /** Reads exactly {@code len} bytes at {@code position}, which the caller keeps in the file. */
  void read(long position, byte[] buf, int off, int len) throws IOException {
    while (len > 0) {
      checkOpen();
      BlockInfo block = blocks.get((int) (position / file.getBlockSize()));
      long inBlock = position - block.getOffset();
      int n = (int) Math.min(len, block.getLength() - inBlock);
      readBlock(block, inBlock, buf, off, n);
      position += n;
      off += n;
      len -= n;
    }
  }

  private void readBlock(BlockInfo block, long offset, byte[] buf, int off, int len)
      throws IOException {
    // A block file this stream already opened needs no worker choice: ranking the workers
    // copies and sorts the worker list, which small random reads should not pay for.
    LocalBlockFile open = localFiles.get(block.getBlockId());
    if (open != null && readOpenLocal(block.getBlockId(), open, offset, buf, off, len)) {
      return;
    }
    List<Source> sources = sources(block);
    String lastFailure = null;
    for (Source source : sources) {
      if (failedWorkers.contains(source.workerId)) {
        continue;
      }
      try {
        readFrom(source, block, offset, buf, off, len);
        return;
      } catch (DataTransferException e) {
        int got = keptAfterFailure(block, (int) e.bytesReceived());
        ctx.metrics.addRemote(got);
        offset += got;
        off += got;
        len -= got;
        failedWorkers.add(source.workerId);
        ctx.metrics.addRetry();
        lastFailure = e.getMessage();
        LOG.warn(
            "Reading block {} of {} from worker {} failed; trying the next source: {}",
            block.getBlockId(),
            file.getPath(),
            source.workerId,
            e.getMessage());
        ctx.workers.invalidate();
        if (source.holds) {
          refreshBlocks();
        }
      }
    }
    checkOpen();
    if (ufsFallback) {
      ctx.underStore.readFully(file, block.getOffset() + offset, buf, off, len);
      ctx.metrics.addUfs(len);
      return;
    }
    if (sources.isEmpty()) {
      throw FileSystem.noLiveWorkers();
    }
    throw new StrataException(
        ErrorCode.UNAVAILABLE,
        "Cannot read block "
            + block.getBlockId()
            + " of "
            + file.getPath()
            + ": every worker that could serve it failed ("
            + (lastFailure != null ? "last: " + lastFailure : "in earlier reads of this stream")
            + "). Set strata.client.read.ufs.fallback.enabled=true to read the under store"
            + " directly.");
  }

  /**
   * How many of the {@code got} bytes a worker delivered before it failed may be kept. A worker
   * that found the file changed in its under store mid-transfer closes the channel like a crashing
   * one, and the bytes it sent may be of the new version: completing them from a worker that holds
   * the old block would mix versions. So the under store is asked first: changed, the read fails;
   * unknown (the store cannot be asked), the bytes are dropped and the whole piece is asked again
   * of sources that either serve the old version whole or refuse it.
   */
  private int keptAfterFailure(BlockInfo block, int got) throws StrataException {
    String expected = file.getUfsFingerprint();
    if (got == 0 || expected.isEmpty()) {
      return got;
    }
    String now;
    try {
      now = ctx.underStore.fingerprint(file);
    } catch (StrataException e) {
      LOG.debug(
          "Cannot tell whether {} changed ({}); reading block {} again from its start",
          file.getPath(),
          e.getMessage(),
          block.getBlockId());
      return 0;
    }
    if (!expected.equals(now)) {
      throw UnderStoreReader.changed(file, now);
    }
    return got;
  }

  /** The workers to ask for a block, best first. */
  private List<Source> sources(BlockInfo block) throws StrataException {
    List<WorkerInfo> ranked =
        WorkerHashing.rank(block.getBlockId(), ctx.workers.live(), WorkerInfo::getWorkerId);
    List<Source> out = new ArrayList<>(ranked.size() + 1);
    for (WorkerInfo w : ranked) {
      out.add(new Source(w.getWorkerId(), w.getAddress(), holds(block, w.getWorkerId())));
    }
    if (block.getLocationsCount() > 0 && (out.isEmpty() || !out.get(0).holds)) {
      int holder = -1;
      for (int i = 0; i < out.size() && holder < 0; i++) {
        holder = out.get(i).holds ? i : -1;
      }
      if (holder > 0) {
        out.add(0, out.remove(holder));
      } else {
        // A holder the cached worker list does not know yet (it registered since).
        BlockLocation loc = block.getLocations(0);
        out.add(0, new Source(loc.getWorkerId(), loc.getAddress(), true));
      }
    }
    return out;
  }

  private static boolean holds(BlockInfo block, long workerId) {
    for (BlockLocation loc : block.getLocationsList()) {
      if (loc.getWorkerId() == workerId) {
        return true;
      }
    }
    return false;
  }

  private void readFrom(Source source, BlockInfo block, long offset, byte[] buf, int off, int len)
      throws IOException {
    if (shortCircuit
        && LocalHost.isLocal(source.address.getHost())
        && readLocal(source, block, offset, buf, off, len)) {
      return;
    }
    ReadBlockResponse r = null;
    // Bytes that arrive other than the worker sent them are read once more, then the next source
    // is tried: never handed on.
    for (int attempt = 1; r == null; attempt++) {
      r = ctx.data.read(source.address, request(block, offset, len, false), buf, off);
      if (r.getStatus() != ReadStatus.READ_OK) {
        throw failure(source, block, offset, len, r);
      }
      long bad = arrivedDamaged(r, offset, buf, off, len);
      if (bad >= 0) {
        String what =
            "Bytes from "
                + (block.getOffset() + bad)
                + " of "
                + file.getPath()
                + " (block "
                + block.getBlockId()
                + ", offset "
                + bad
                + ") arrived from worker "
                + source.address.getHost()
                + ":"
                + source.address.getDataPort()
                + " with another CRC32C than the worker sent";
        if (attempt >= 2) {
          throw new DataTransferException(
              what
                  + ", twice: the worker's disk copy passed its own check, so check the network"
                  + " between this host and that worker, and that worker's memory",
              null,
              0);
        }
        LOG.warn("{}; reading them again", what);
        ctx.metrics.addRetry();
        r = null;
      }
    }
    ctx.metrics.addRemote(len);
    if (r.getFromCache()) {
      notLocal.remove(block.getBlockId());
    }
  }

  /**
   * Reads by short-circuit; false when the block is not in a local block file. The file is opened
   * in the worker's tier folders when this process sees them, else the worker is asked where it is.
   */
  private boolean readLocal(
      Source source, BlockInfo block, long offset, byte[] buf, int off, int len)
      throws IOException {
    long id = block.getBlockId();
    LocalBlockFile local = localFiles.get(id);
    if (local == null) {
      if (notLocal.contains(id)) {
        return false;
      }
      local = openDirect(block);
      if (local == null && ctx.localTiers.visible()) {
        // The tier folders are visible and none has the block: it is not cached here, and
        // asking the worker would only say so.
        notLocal.add(id);
        return false;
      }
      if (local == null) {
        local = openLocal(source, block, offset, len);
      }
      if (local == null) {
        return false;
      }
    }
    return readOpenLocal(id, local, offset, buf, off, len);
  }

  /** Reads from an open block file; false (and the file dropped) when that fails. */
  private boolean readOpenLocal(
      long id, LocalBlockFile local, long offset, byte[] buf, int off, int len) throws IOException {
    try {
      if (!local.read(offset, buf, off, len)) {
        checkOpen();
        return false;
      }
    } catch (IOException e) {
      checkOpen();
      dropLocal(id, local, e);
      return false;
    }
    ctx.metrics.addShortCircuit(len);
    reportRead(local, len);
    return true;
  }

  private LocalBlockFile openLocal(Source source, BlockInfo block, long offset, int len)
      throws IOException {
    long id = block.getBlockId();
    ReadBlockResponse r = ctx.data.read(source.address, request(block, offset, len, true), null, 0);
    if (r.getStatus() == ReadStatus.READ_NOT_CACHED) {
      notLocal.add(id);
      return null;
    }
    if (r.getStatus() != ReadStatus.READ_OK) {
      throw failure(source, block, offset, len, r);
    }
    LocalBlockFile ch;
    try {
      ch =
          LocalBlockFile.open(
              Path.of(r.getLocalPath()), block.getLength(), ctx.localTiers.verifies());
    } catch (IOException e) {
      // Moved to another tier or evicted between the reply and the open.
      LOG.debug(
          "Cannot open block file {} of block {} ({}); reading over the network",
          r.getLocalPath(),
          id,
          e.toString());
      notLocal.add(id);
      refreshBlocks();
      return null;
    }
    LocalBlockFile kept = keep(id, ch);
    if (kept == null) {
      checkOpen();
    }
    return kept;
  }

  /**
   * The block offset of the first piece of a reply's bytes that does not match the checksum the
   * worker sent for it, or -1 when all match or the worker sent none.
   */
  private long arrivedDamaged(ReadBlockResponse r, long offset, byte[] buf, int off, int len) {
    if (!ctx.verifyBlocks || r.getPieceChecksumsCount() == 0 || r.getChecksumChunkSize() <= 0) {
      return -1;
    }
    return BlockChecksums.firstBadPiece(
        buf, off, offset, len, r.getChecksumChunkSize(), r.getPieceChecksumsList());
  }

  private ReadBlockRequest request(BlockInfo block, long offset, long len, boolean local) {
    UfsBlockSource source =
        UfsBlockSource.newBuilder()
            .setUfsPath(file.getUfsPath())
            .setMountId(file.getMountId())
            .setBlockStart(block.getOffset())
            .setBlockLength(block.getLength())
            .setUfsFingerprint(file.getUfsFingerprint())
            .build();
    return ReadBlockRequest.newBuilder()
        .setBlockId(block.getBlockId())
        .setOffset(offset)
        .setLength(len)
        .setSource(source)
        .setShortCircuit(local)
        .setWantChecksums(ctx.verifyBlocks && !local)
        .build();
  }

  /** The error for a reply that is not READ_OK; worker-side failures lead to failover. */
  private IOException failure(
      Source source, BlockInfo block, long offset, long len, ReadBlockResponse r) {
    String worker = source.address.getHost() + ":" + source.address.getDataPort();
    switch (r.getStatus()) {
      case READ_NOT_FOUND:
        return new StrataException(
            ErrorCode.NOT_FOUND,
            "Path does not exist in the under store: "
                + file.getPath()
                + " ("
                + file.getUfsPath()
                + "): "
                + r.getMessage());
      case READ_INVALID:
        return new StrataException(
            ErrorCode.INVALID_ARGUMENT,
            "Worker "
                + worker
                + " refused bytes "
                + offset
                + ".."
                + (offset + len)
                + " of block "
                + block.getBlockId()
                + " of "
                + file.getPath()
                + ": "
                + r.getMessage()
                + " (the file may have changed in its under store)");
      case READ_CHANGED:
        return UnderStoreReader.changed(file, r.getUfsFingerprint());
      case READ_ERROR:
        return new DataTransferException(
            "Worker "
                + worker
                + " could not read block "
                + block.getBlockId()
                + " of "
                + file.getPath()
                + ": "
                + r.getMessage(),
            null,
            0);
      default:
        return new DataTransferException(
            "Worker "
                + worker
                + " replied "
                + r.getStatus()
                + " to a read of block "
                + block.getBlockId(),
            null,
            0);
    }
  }

  /** Asks the master again where the blocks are; one refresh at a time, failures ignored. */
  private void refreshBlocks() {
    if (!refreshing.compareAndSet(false, true)) {
      return;
    }
    try {
      GetFileBlocksResponse r =
          ctx.master.call(
              s ->
                  s.getFileBlocks(
                      GetFileBlocksRequest.newBuilder().setPath(file.getPath()).build()));
      if (r.getFile().getFileId() == file.getFileId()
          && r.getFile().getLength() == file.getLength()) {
        blocks = complete(file, r.getBlocksList());
      }
    } catch (StrataException e) {
      LOG.debug("Cannot refresh the block list of {}: {}", file.getPath(), e.getMessage());
    } finally {
      refreshing.set(false);
    }
  }

  private void checkOpen() throws StrataException {
    if (closed) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, "The stream of " + file.getPath() + " is closed");
    }
  }

  @Override
  public void close() {
    closed = true;
    for (LocalBlockFile f : localFiles.values()) {
      f.close();
    }
    localFiles.clear();
  }
}
