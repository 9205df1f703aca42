package io.strata.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.StatusRuntimeException;
import io.strata.common.conf.ClientKeys;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.CommitNewFileRequest;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerServiceGrpc;
import io.strata.proto.WriteBlocksHeader;
import io.strata.proto.WriteFileHeader;
import io.strata.proto.WriteFileResponse;
import io.strata.proto.WriteSmallFileRequest;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a new Strata file, or a new version of an existing one, through one worker to its under
 * store.
 *
 * <p>Bytes are streamed to the worker in chunks of {@code strata.client.write.chunk.size} as they
 * are written; the call to the worker starts with the first chunk, so a stream created long before
 * its bytes come holds no call open. {@link #close()} ends the stream, waits for the worker to
 * commit the file in the under store, and then completes the file at the master with its length and
 * fingerprint; only then is the file (or its new version) readable. With write type CACHE_THROUGH
 * (the default) close also waits until the workers that reads of the file go to have cached its
 * blocks ({@link WrittenFileCacher}). A new file of write type ASYNC_THROUGH or MUST_CACHE streams
 * to the worker's cache only instead (WriteBlocks, see {@link #cacheOnly}), and close completes it
 * at the master without a store fingerprint. If anything fails (or {@link #cancel()} is called) the
 * stream is cancelled, so the worker discards the partial file and nothing appears under its name,
 * and a new file's incomplete entry is deleted from the namespace (a new version's file keeps its
 * current content). Not thread-safe: one writer.
 */
public final class FileOutStream extends OutputStream {
  private static final Logger LOG = LoggerFactory.getLogger(FileOutStream.class);

  private final ClientContext ctx;
  private final String path;
  private final long fileId;
  private final boolean version;
  private final boolean deleteOnFailure;
  private final WorkerAddress worker;
  private final WriteFileHeader header;

  /** For a file the master learns of only at close (one call): its options; else null. */
  private final CreateOptions newFile;

  private final long mountId;

  /** For content that goes to the worker's cache only (ASYNC_THROUGH, MUST_CACHE); else null. */
  private final WriteBlocksHeader blocks;

  private WorkerWriteStream<?> stream;

  /** The first chunk buffer's size: most files written through a proxy or mount are small. */
  static final int FIRST_CHUNK = 64 << 10;

  private final int chunkSize;
  private byte[] chunk;
  private int chunkLen;
  private long written;
  private boolean closed;
  private Map<String, ByteString> xattrs = Map.of();
  private FileCompletion completion = FileCompletion.NONE;
  private FileInfo completed;

  FileOutStream(ClientContext ctx, FileInfo file, boolean overwrite, WorkerAddress worker) {
    this(ctx, file, overwrite, worker, false, true);
  }

  /**
   * @param version whether {@code file} is a new version of an existing file
   * @param deleteOnFailure whether a failed or cancelled stream deletes the file's incomplete entry
   *     (never for a version)
   */
  FileOutStream(
      ClientContext ctx,
      FileInfo file,
      boolean overwrite,
      WorkerAddress worker,
      boolean version,
      boolean deleteOnFailure) {
    this(ctx, file, overwrite, worker, version, deleteOnFailure, null);
  }

  /**
   * A new file created in the namespace as not in its under store (CreateFile with a persistence
   * state): the content goes to {@code worker}'s cache only, as blocks of the file's data id, and
   * close completes the file at the master. A failed or cancelled stream deletes the incomplete
   * file.
   */
  static FileOutStream cacheOnly(ClientContext ctx, FileInfo file, WorkerAddress worker) {
    return new FileOutStream(
        ctx,
        file,
        false,
        worker,
        false,
        true,
        WriteBlocksHeader.newBuilder()
            .setDataId(file.getFileId())
            .setBlockSize(file.getBlockSize())
            .build());
  }

  private FileOutStream(
      ClientContext ctx,
      FileInfo file,
      boolean overwrite,
      WorkerAddress worker,
      boolean version,
      boolean deleteOnFailure,
      WriteBlocksHeader blocks) {
    this.ctx = ctx;
    this.blocks = blocks;
    this.path = file.getPath();
    this.fileId = file.getFileId();
    this.version = version;
    this.deleteOnFailure = deleteOnFailure && !version;
    this.worker = worker;
    this.chunkSize =
        (int) Math.max(1, Math.min(64 << 20, ctx.conf.getBytes(ClientKeys.WRITE_CHUNK_SIZE)));
    // Grown to the chunk size as bytes come: a full-size buffer for each file cost a small
    // file's writer more in zeroing and garbage than its bytes did.
    this.chunk = new byte[Math.min(chunkSize, FIRST_CHUNK)];
    this.header =
        WriteFileHeader.newBuilder()
            .setUfsPath(file.getUfsPath())
            .setMountId(file.getMountId())
            .setMode(file.getMode())
            .setOverwrite(overwrite || version)
            .build();
    this.newFile = null;
    this.mountId = file.getMountId();
  }

  /**
   * A new file the master learns of only when the stream closes: the worker writes the content at
   * {@code placement} without overwriting, then one master call (CommitNewFile) makes the file
   * complete with {@code options}' mode, owner, group and block size. Nothing is in the namespace
   * before that, so a failed or cancelled stream leaves nothing behind.
   */
  FileOutStream(
      ClientContext ctx,
      String path,
      MountResolver.Placement placement,
      CreateOptions options,
      WorkerAddress worker) {
    this.ctx = ctx;
    this.path = path;
    this.fileId = 0;
    this.version = false;
    this.deleteOnFailure = false;
    this.worker = worker;
    this.chunkSize =
        (int) Math.max(1, Math.min(64 << 20, ctx.conf.getBytes(ClientKeys.WRITE_CHUNK_SIZE)));
    this.chunk = new byte[Math.min(chunkSize, FIRST_CHUNK)];
    this.header =
        WriteFileHeader.newBuilder()
            .setUfsPath(placement.ufsPath())
            .setMountId(placement.mount().getMountId())
            .setMode(options.mode())
            .setOverwrite(false)
            .build();
    this.newFile = options;
    this.mountId = placement.mount().getMountId();
    this.blocks = null;
  }

  /** The call to the worker, started at the first chunk (or at close for an empty file). */
  private WorkerWriteStream<?> stream() {
    if (stream == null) {
      String address = worker.getHost() + ":" + worker.getRpcPort();
      Duration stall = ctx.conf.getDuration(ClientKeys.RPC_TIMEOUT);
      stream =
          blocks != null
              ? WorkerWriteStream.writeBlocks(ctx.workerChannel(worker), address, blocks, stall)
              : WorkerWriteStream.writeFile(ctx.workerChannel(worker), address, header, stall);
    }
    return stream;
  }

  /** The namespace path of the file being written. */
  public String path() {
    return path;
  }

  /**
   * Extended attributes the file gets when it is completed by {@link #close()}, in the same master
   * call, so that no reader sees the file without them (the S3 proxy's object metadata). Replaces
   * what an earlier call gave.
   */
  public void setXattrsOnComplete(Map<String, ByteString> values) {
    this.xattrs = Map.copyOf(values);
  }

  /**
   * Attributes the file gets when {@link #close()} completes it, in the same master call (see
   * {@link FileCompletion}). Replaces what an earlier call gave.
   */
  public void setCompletion(FileCompletion value) {
    this.completion = value;
  }

  /** The file's status as the master completed it; null until {@link #close()} succeeded. */
  public FileInfo completedStatus() {
    return completed;
  }

  /** Bytes written so far. */
  public long bytesWritten() {
    return written;
  }

  @Override
  public void write(int b) throws IOException {
    checkOpen();
    if (chunkLen == chunk.length) {
      grow();
    }
    chunk[chunkLen++] = (byte) b;
    written++;
    if (chunkLen == chunkSize) {
      sendChunk();
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    checkOpen();
    Objects.checkFromIndexSize(off, len, b.length);
    while (len > 0) {
      if (chunkLen == chunk.length) {
        grow();
      }
      int n = Math.min(len, chunk.length - chunkLen);
      System.arraycopy(b, off, chunk, chunkLen, n);
      chunkLen += n;
      written += n;
      off += n;
      len -= n;
      if (chunkLen == chunkSize) {
        sendChunk();
      }
    }
  }

  /** Doubles the chunk buffer, up to the chunk size; called only when it is full. */
  private void grow() {
    chunk = java.util.Arrays.copyOf(chunk, Math.min(chunkSize, chunk.length * 2));
  }

  /** Data goes out a chunk at a time; a partial chunk is sent by {@link #close()}. */
  @Override
  public void flush() throws IOException {
    checkOpen();
  }

  private void sendChunk() throws IOException {
    try {
      stream().send(ByteString.copyFrom(chunk, 0, chunkLen));
      ctx.metrics.addWritten(chunkLen);
      chunkLen = 0;
    } catch (IOException | RuntimeException e) {
      throw abort("the worker stream failed", e);
    }
  }

  /** Commits the file: the worker finishes it in the under store, the master completes it. */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    try {
      commit();
    } finally {
      // Completed, or failed: either way this client writes the file no more.
      ctx.leases.release(fileId);
    }
  }

  private void commit() throws IOException {
    closed = true;
    WriteFileResponse r;
    Duration timeout = ctx.conf.getDuration(ClientKeys.RPC_TIMEOUT);
    try {
      r = stream == null && blocks == null ? writeWhole(timeout) : null;
    } catch (IOException | RuntimeException e) {
      throw abort("the worker could not commit it", e);
    }
    if (r == null) {
      if (chunkLen > 0) {
        sendChunk();
      }
      try {
        r = stream().finish(timeout);
      } catch (IOException | RuntimeException e) {
        if (blocks != null
            && e instanceof StrataException se
            && se.code() == ErrorCode.UNIMPLEMENTED) {
          throw abort(
              "the worker is of an earlier release that cannot hold a file in its"
                  + " cache only: upgrade the workers, or write with CACHE_THROUGH or THROUGH",
              e);
        }
        throw abort("the worker could not commit it", e);
      }
    }
    if (r.getLength() != written) {
      throw abort(
          "the worker stored " + r.getLength() + " bytes",
          new StrataException(
              ErrorCode.INTERNAL,
              "length mismatch: wrote " + written + ", stored " + r.getLength()));
    }
    if (newFile != null) {
      completed = commitNew(r);
      cacheWritten();
      return;
    }
    CompleteFileRequest.Builder request =
        CompleteFileRequest.newBuilder()
            .setPath(path)
            .setFileId(fileId)
            .setLength(written)
            .setUfsFingerprint(r.getUfsFingerprint())
            .putAllXattrs(xattrs);
    if (completion.modificationTimeNs() != null) {
      request.setModificationTimeNs(completion.modificationTimeNs());
    }
    if (completion.mode() != null) {
      request.setMode(completion.mode());
    }
    if (completion.owner() != null) {
      request.setOwner(completion.owner());
    }
    if (completion.group() != null) {
      request.setGroup(completion.group());
    }
    if (completion.accessTimeNs() != null) {
      request.setAccessTimeNs(completion.accessTimeNs());
    }
    try {
      completed = ctx.master.call(s -> s.completeFile(request.build())).getFile();
    } catch (StrataException e) {
      // STALE: the path is another writer's file now, which the delete would refuse anyway.
      if (e.code() != ErrorCode.STALE) {
        deleteIncomplete();
      }
      throw new StrataException(
          e.code(), e.posix(), "Cannot complete " + path + ": " + e.getMessage(), e);
    }
    cacheWritten();
  }

  /** With CACHE_THROUGH, the completed file's blocks are cached before close returns. */
  private void cacheWritten() {
    if (WriteType.of(completed, ctx.writeType) == WriteType.CACHE_THROUGH) {
      ctx.writtenFiles.cache(completed);
    }
  }

  /**
   * A file whose every byte is still in the first chunk goes to the worker in one WriteSmallFile
   * call, without a stream to set up. Null when the worker predates that call (it is then sent as a
   * stream).
   */
  private WriteFileResponse writeWhole(Duration timeout) throws StrataException {
    if (!ctx.writeSmallFileSupported(worker)) {
      return null;
    }
    WriteSmallFileRequest request =
        WriteSmallFileRequest.newBuilder()
            .setHeader(header)
            // The buffer is not written again: the message may share it instead of a copy.
            .setContent(UnsafeByteOperations.unsafeWrap(chunk, 0, chunkLen))
            .build();
    String address = worker.getHost() + ":" + worker.getRpcPort();
    try {
      WriteFileResponse r =
          WorkerServiceGrpc.newBlockingStub(ctx.workerChannel(worker))
              .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
              .writeSmallFile(request);
      ctx.metrics.addWritten(chunkLen);
      chunkLen = 0;
      return r;
    } catch (StatusRuntimeException e) {
      StrataException error = GrpcErrors.fromStatus(e);
      switch (error.code()) {
        case UNIMPLEMENTED -> {
          ctx.writeSmallFileUnsupported(worker);
          return null;
        }
        case UNAVAILABLE ->
            throw new StrataException(
                ErrorCode.UNAVAILABLE,
                "Lost worker " + address + " while writing: " + error.getMessage(),
                e);
        case DEADLINE_EXCEEDED ->
            throw new StrataException(
                ErrorCode.DEADLINE_EXCEEDED,
                "Worker "
                    + address
                    + " did not confirm the write within "
                    + timeout.toSeconds()
                    + "s",
                e);
        default -> throw error;
      }
    }
  }

  /**
   * Makes the new file complete in one master call, from what the worker wrote. A master of a
   * release before that call gets the create and the completion instead (the worker wrote where its
   * create places the file).
   */
  private FileInfo commitNew(WriteFileResponse r) throws StrataException {
    CommitNewFileRequest.Builder request =
        CommitNewFileRequest.newBuilder()
            .setPath(path)
            .setUfsPath(header.getUfsPath())
            .setMountId(mountId)
            .setLength(written)
            .setUfsFingerprint(r.getUfsFingerprint())
            .setBlockSize(newFile.blockSize())
            .setMode(newFile.mode())
            .setOwner(newFile.owner())
            .setGroup(newFile.group())
            .putAllXattrs(xattrs);
    if (completion.modificationTimeNs() != null) {
      request.setModificationTimeNs(completion.modificationTimeNs());
    }
    if (completion.accessTimeNs() != null) {
      request.setAccessTimeNs(completion.accessTimeNs());
    }
    if (completion.mode() != null) {
      request.setMode(completion.mode());
    }
    if (completion.owner() != null) {
      request.setOwner(completion.owner());
    }
    if (completion.group() != null) {
      request.setGroup(completion.group());
    }
    try {
      return ctx.master.call(s -> s.commitNewFile(request.build())).getFile();
    } catch (StrataException e) {
      if (e.code() == ErrorCode.UNIMPLEMENTED) {
        ctx.commitNewFileUnsupported();
        return createAndComplete(request.build());
      }
      if (e.code() == ErrorCode.FAILED_PRECONDITION) {
        // The mounts may have changed: the next new file asks for them again.
        ctx.mountResolver.forget();
      }
      throw new StrataException(
          e.code(), e.posix(), "Cannot complete " + path + ": " + e.getMessage(), e);
    }
  }

  /** What a master without CommitNewFile is asked instead: a create, then a completion. */
  private FileInfo createAndComplete(CommitNewFileRequest c) throws StrataException {
    FileInfo created;
    try {
      created =
          ctx.master
              .call(
                  s ->
                      s.createFile(
                          CreateFileRequest.newBuilder()
                              .setPath(path)
                              .setBlockSize(c.getBlockSize())
                              .setMode(c.getMode())
                              .setOwner(c.getOwner())
                              .setGroup(c.getGroup())
                              .build()))
              .getFile();
    } catch (StrataException e) {
      throw new StrataException(
          e.code(), e.posix(), "Cannot create " + path + ": " + e.getMessage(), e);
    }
    if (!created.getUfsPath().equals(c.getUfsPath())) {
      try {
        ctx.master.call(
            s ->
                s.delete(
                    DeleteRequest.newBuilder()
                        .setPath(path)
                        .setFileId(created.getFileId())
                        .build()));
      } catch (StrataException suppressed) {
        LOG.warn("Cannot delete the incomplete file {}: {}", path, suppressed.getMessage());
      }
      ctx.mountResolver.forget();
      throw StrataException.failedPrecondition(
          "The mounts changed while "
              + path
              + " was"
              + " written (the master places it at "
              + created.getUfsPath()
              + ", not at "
              + c.getUfsPath()
              + "); write it again");
    }
    CompleteFileRequest.Builder complete =
        CompleteFileRequest.newBuilder()
            .setPath(path)
            .setFileId(created.getFileId())
            .setLength(c.getLength())
            .setUfsFingerprint(c.getUfsFingerprint())
            .putAllXattrs(c.getXattrsMap());
    if (c.hasModificationTimeNs()) {
      complete.setModificationTimeNs(c.getModificationTimeNs());
    }
    if (c.hasAccessTimeNs()) {
      complete.setAccessTimeNs(c.getAccessTimeNs());
    }
    try {
      return ctx.master.call(s -> s.completeFile(complete.build())).getFile();
    } catch (StrataException e) {
      throw new StrataException(
          e.code(), e.posix(), "Cannot complete " + path + ": " + e.getMessage(), e);
    }
  }

  /**
   * Discards the file: the worker aborts its partial copy and the incomplete file is deleted from
   * the namespace. Does nothing after a successful {@link #close()}.
   */
  public void cancel() {
    if (closed) {
      return;
    }
    closed = true;
    if (stream != null) {
      stream.cancel("write of " + path + " cancelled by the client");
    }
    deleteIncomplete();
    ctx.leases.release(fileId);
  }

  private StrataException abort(String what, Exception cause) {
    closed = true;
    if (stream != null) {
      stream.cancel("write of " + path + " failed");
    }
    deleteIncomplete();
    ctx.leases.release(fileId);
    if (WriteTargets.workerAway(cause)) {
      ctx.writeTargets.failed(worker);
    }
    ErrorCode code =
        cause instanceof StrataException ? ((StrataException) cause).code() : ErrorCode.INTERNAL;
    return new StrataException(
        code,
        "Write of "
            + path
            + " failed after "
            + written
            + " bytes ("
            + what
            + "): "
            + cause.getMessage()
            + (version
                ? ". The file keeps its previous content; write it again."
                : deleteOnFailure
                    ? ". The file was removed; write it again."
                    : ". The file stays incomplete; write it again."),
        cause);
  }

  /**
   * Deletes this writer's file, never another writer's file now at the same path; a new version's
   * file, or an entry its creator keeps, stays as it was.
   */
  private void deleteIncomplete() {
    if (!deleteOnFailure) {
      return;
    }
    try {
      ctx.master.call(
          s -> s.delete(DeleteRequest.newBuilder().setPath(path).setFileId(fileId).build()));
    } catch (StrataException e) {
      if (e.code() == ErrorCode.STALE) {
        LOG.info("Not deleting {}: {}", path, e.getMessage());
      } else {
        LOG.warn("Cannot delete the incomplete file {}: {}", path, e.getMessage());
      }
    }
  }

  private void checkOpen() throws StrataException {
    if (closed) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, "The output stream of " + path + " is closed");
    }
  }
}
