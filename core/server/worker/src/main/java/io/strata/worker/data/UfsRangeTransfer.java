package io.strata.worker.data;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReadStatus;
import io.strata.proto.UfsBlockSource;
import io.strata.underfs.UnderFileSystem;
import io.strata.worker.ufs.MountedStores;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends one range of a block that is not cached, read from its under store. The range is read in
 * chunks on a bounded executor, never on the event loop. The next chunk is read only while the
 * channel is writable and fewer than two chunks are written but not yet flushed to the socket, so a
 * slow client holds back the reads instead of filling memory. The response header goes out only
 * once the first chunk has been read, so a missing or unreadable file is reported with a status; a
 * failure after that can only close the channel, which the client sees as a short read.
 *
 * <p>When the source carries the fingerprint the client opened the file with, no byte of another
 * version is ever sent as if it were that one: the under store is asked for the fingerprint before
 * the first chunk is read and again after the last chunk is read but before it is written. A
 * mismatch found while nothing was sent is answered with READ_CHANGED; one found later closes the
 * channel and withholds the last chunk, so the client never receives the whole range. Costs two
 * under-store stats per range; a range from a source without a fingerprint is not checked.
 */
final class UfsRangeTransfer implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(UfsRangeTransfer.class);
  private static final int MAX_CHUNKS_IN_FLIGHT = 2;

  private final Channel channel;
  private final MountedStores stores;
  private final UfsBlockSource source;
  private final long blockId;
  private final long length;
  private final int chunkSize;
  private final Executor executor;
  private final ReadMetrics metrics;
  private final Runnable onDone;
  private UnderFileSystem ufs;
  // Touched only by the thread running a read; reads run one at a time (see `reading`).
  private boolean checkedBefore;

  // Guarded by this.
  private long position;
  private long remaining;
  private int inFlight;
  private boolean reading;
  private boolean headerSent;
  private boolean finished;

  /**
   * @param offset offset of the range within the block
   * @param onDone run once when the whole response has been written, or has failed
   */
  UfsRangeTransfer(
      Channel channel,
      MountedStores stores,
      UfsBlockSource source,
      long blockId,
      long offset,
      long length,
      int chunkSize,
      Executor executor,
      ReadMetrics metrics,
      Runnable onDone) {
    this.channel = channel;
    this.stores = stores;
    this.source = source;
    this.blockId = blockId;
    this.length = length;
    this.chunkSize = chunkSize;
    this.executor = executor;
    this.metrics = metrics;
    this.onDone = onDone;
    this.position = source.getBlockStart() + offset;
    this.remaining = length;
  }

  void start() {
    if (length == 0) {
      channel
          .writeAndFlush(ResponseFrames.encode(channel.alloc(), okHeader()))
          .addListener(f -> finish());
      return;
    }
    synchronized (this) {
      reading = true;
    }
    try {
      executor.execute(this);
    } catch (RejectedExecutionException e) {
      respondError(
          ReadStatus.READ_ERROR,
          "Worker is overloaded: too many under-store reads "
              + "queued; block "
              + blockId
              + " of "
              + source.getUfsPath()
              + " was not read. Retry.");
    }
  }

  private ReadBlockResponse okHeader() {
    return ReadBlockResponse.newBuilder()
        .setStatus(ReadStatus.READ_OK)
        .setLength(length)
        .setFromCache(false)
        .build();
  }

  @Override
  public void run() {
    long pos;
    int n;
    boolean last;
    synchronized (this) {
      if (finished) {
        return;
      }
      pos = position;
      n = (int) Math.min(chunkSize, remaining);
      last = n == remaining;
    }
    if (!channel.isActive()) {
      abandon(null);
      return;
    }
    ByteBuf buf = channel.alloc().heapBuffer(n);
    try {
      if (ufs == null) {
        ufs = stores.get(source.getUfsPath(), source.getMountId());
      }
      // Checked at both ends because a rewrite can land during the transfer: the first check
      // keeps a request made for an older version from getting any byte, the last one (made
      // before the last chunk goes out) catches a rewrite that landed while chunks were read.
      if (!checkedBefore) {
        checkedBefore = true;
        if (!fingerprintHolds()) {
          buf.release();
          return;
        }
      }
      readFully(buf, pos, n);
      if (last && !fingerprintHolds()) {
        buf.release();
        return;
      }
    } catch (Throwable t) {
      buf.release();
      fail(t);
      return;
    }
    boolean first;
    synchronized (this) {
      position += n;
      remaining -= n;
      inFlight++;
      first = !headerSent;
      headerSent = true;
    }
    if (first) {
      // The chunk written next reports how the reply went; nothing waits for the header alone.
      var unused = channel.write(ResponseFrames.encode(channel.alloc(), okHeader()));
    }
    channel.writeAndFlush(buf).addListener(f -> written((ChannelFuture) f, n));
    // Only now may the next read start: were it allowed before this chunk is queued on the
    // channel, a write completing meanwhile could start it on another thread and its chunk
    // could be written first.
    synchronized (this) {
      reading = false;
    }
    scheduleRead();
  }

  /**
   * Whether the under-store file still has the source's fingerprint (always, when the source has
   * none). When it does not, the transfer is ended: with READ_CHANGED while no header was sent,
   * else by closing the channel.
   */
  private boolean fingerprintHolds() throws IOException {
    String expected = source.getUfsFingerprint();
    if (expected.isEmpty()) {
      return true;
    }
    String now = ufs.fingerprint(source.getUfsPath());
    if (expected.equals(now)) {
      return true;
    }
    boolean sent;
    synchronized (this) {
      sent = headerSent;
    }
    if (sent) {
      LOG.info(
          "Closing data channel {}: {} changed in its under store while block {} was sent"
              + " (fingerprint {}, now {})",
          channel.remoteAddress(),
          source.getUfsPath(),
          blockId,
          expected,
          now);
      abandon(null);
    } else {
      LOG.debug(
          "Refusing block {}: {} changed in its under store (fingerprint {}, now {})",
          blockId,
          source.getUfsPath(),
          expected,
          now);
      respond(
          ReadBlockResponse.newBuilder()
              .setStatus(ReadStatus.READ_CHANGED)
              .setUfsFingerprint(now)
              .setMessage(BlockCacher.changedMessage(source.getUfsPath(), expected, now))
              .build());
    }
    return false;
  }

  private void readFully(ByteBuf buf, long pos, int n) throws IOException {
    byte[] array = buf.array();
    int base = buf.arrayOffset() + buf.writerIndex();
    int done = 0;
    while (done < n) {
      metrics.ufsCall();
      int r = ufs.read(source.getUfsPath(), pos + done, array, base + done, n - done);
      if (r <= 0) {
        throw new StrataException(
            ErrorCode.FAILED_PRECONDITION,
            "Under-store file "
                + source.getUfsPath()
                + " ends at byte "
                + (pos + done)
                + ", inside block "
                + blockId
                + " (bytes "
                + source.getBlockStart()
                + " to "
                + (source.getBlockStart() + source.getBlockLength())
                + "): the file changed "
                + "outside Strata; reload its metadata");
      }
      done += r;
    }
    buf.writerIndex(buf.writerIndex() + n);
  }

  private void written(ChannelFuture f, int n) {
    if (!f.isSuccess()) {
      abandon(f.cause());
      return;
    }
    metrics.ufsBytes(n);
    boolean done;
    synchronized (this) {
      inFlight--;
      done = remaining == 0 && inFlight == 0 && !finished;
    }
    if (done) {
      finish();
    } else {
      scheduleRead();
    }
  }

  private void scheduleRead() {
    synchronized (this) {
      if (finished || reading || remaining == 0 || inFlight >= MAX_CHUNKS_IN_FLIGHT) {
        return;
      }
      // While the channel is over its high water mark, the next read waits for a write of
      // ours to complete (there is one: only this transfer writes to the channel now).
      if (inFlight > 0 && !channel.isWritable()) {
        return;
      }
      reading = true;
    }
    try {
      executor.execute(this);
    } catch (RejectedExecutionException e) {
      abandon(e);
    }
  }

  private void fail(Throwable t) {
    boolean sent;
    synchronized (this) {
      sent = headerSent;
    }
    if (sent) {
      abandon(t);
      return;
    }
    if (t instanceof NoSuchFileException || t instanceof FileNotFoundException) {
      respondError(
          ReadStatus.READ_NOT_FOUND,
          "Block "
              + blockId
              + ": under-store file "
              + source.getUfsPath()
              + " does not exist (deleted or renamed outside Strata?)");
    } else if (t instanceof StrataException
        && ((StrataException) t).code() == ErrorCode.INVALID_ARGUMENT) {
      respondError(ReadStatus.READ_INVALID, t.getMessage());
    } else {
      LOG.debug("Reading block {} from {} failed", blockId, source.getUfsPath(), t);
      respondError(
          ReadStatus.READ_ERROR,
          "Block " + blockId + ": cannot read " + source.getUfsPath() + ": " + t.getMessage());
    }
  }

  private void respondError(ReadStatus status, String message) {
    respond(ResponseFrames.status(status, message));
  }

  /** Answers with a header and no bytes, which ends the transfer. */
  private void respond(ReadBlockResponse header) {
    synchronized (this) {
      headerSent = true;
    }
    channel
        .writeAndFlush(ResponseFrames.encode(channel.alloc(), header))
        .addListener(f -> finish());
  }

  /** Gives up after the header was sent: only closing tells the client the bytes are short. */
  private void abandon(Throwable cause) {
    synchronized (this) {
      if (finished) {
        return;
      }
    }
    if (cause != null && channel.isActive()) {
      LOG.warn(
          "Closing data channel {}: block {} from {} failed mid-transfer: {}",
          channel.remoteAddress(),
          blockId,
          source.getUfsPath(),
          cause.toString());
    }
    // Closing is how the client learns the bytes are short; nothing waits for it.
    var unused = channel.close();
    finish();
  }

  private void finish() {
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
    }
    onDone.run();
  }
}
