package io.strata.underfs.hdfs;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Scheduler;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.protocol.HdfsFileStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bounded cache of open HDFS input streams, one per file, so that repeated positioned reads of a
 * file skip the namenode call that opening costs (getBlockLocations, which also ships the block and
 * replica list) and reuse the block locations the stream already holds.
 *
 * <p>Each stream is tagged with the version of the file it was opened on: the inode id, the length
 * and the modification time. A caller passes the file's current status and gets a stream only if
 * its tag matches, else a freshly opened one replaces it. A stream's content is never older than
 * its tag (the status is fetched before the stream is opened), so a stream handed out for a status
 * serves that version or a newer one, never bytes of a file that has since been replaced, appended
 * to or truncated.
 *
 * <p>Positioned reads on one HDFS stream are safe from many threads at once, so one stream is
 * shared by all readers of a file. A stream is closed when evicted (more than {@link #MAX_STREAMS}
 * files, or {@link #IDLE} without a read), replaced or discarded; a read that was still using it
 * then fails, and the caller is expected to retry once on a fresh one.
 */
final class InputStreamCache implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(InputStreamCache.class);

  /** Open streams hold sockets and buffers; a worker reads only a few hundred files at once. */
  static final int MAX_STREAMS = 256;

  static final Duration IDLE = Duration.ofMinutes(1);

  /** An open stream and the version of the file it serves. */
  static final class OpenFile {
    final FSDataInputStream in;
    private final long fileId;
    private final long length;
    private final long modificationTime;

    private OpenFile(FSDataInputStream in, FileStatus status) {
      this.in = in;
      this.fileId = fileId(status);
      this.length = status.getLen();
      this.modificationTime = status.getModificationTime();
    }

    boolean serves(FileStatus status) {
      return fileId == fileId(status)
          && length == status.getLen()
          && modificationTime == status.getModificationTime();
    }

    private static long fileId(FileStatus status) {
      // A file deleted and written again gets a new inode id even when its length and
      // modification time happen to match.
      return status instanceof HdfsFileStatus hdfs ? hdfs.getFileId() : 0;
    }
  }

  private final FileSystem fs;
  private final Cache<String, OpenFile> streams;

  InputStreamCache(FileSystem fs) {
    this.fs = fs;
    this.streams =
        Caffeine.newBuilder()
            .maximumSize(MAX_STREAMS)
            .expireAfterAccess(IDLE)
            // Closing is cheap and local; doing it on the thread that evicts keeps the count of
            // open streams exact, and the scheduler closes idle streams of a store no one reads.
            .executor(Runnable::run)
            .scheduler(Scheduler.systemScheduler())
            .<String, OpenFile>removalListener((path, open, cause) -> closeQuietly(path, open))
            .build();
  }

  /**
   * A stream over {@code path} that serves the version described by {@code current} (or a newer
   * one); opens and caches one when the cached stream is missing or older.
   */
  OpenFile open(Path path, FileStatus current) throws IOException {
    String key = path.toUri().getPath();
    OpenFile cached = streams.getIfPresent(key);
    if (cached != null && cached.serves(current)) {
      return cached;
    }
    OpenFile fresh = new OpenFile(fs.open(path), current);
    // Two readers may open at once; one stream wins and the other is closed unused.
    OpenFile winner =
        streams.asMap().compute(key, (k, old) -> old != null && old.serves(current) ? old : fresh);
    if (winner != fresh) {
      closeQuietly(key, fresh);
    }
    return winner;
  }

  /** Drops {@code open} if it is still the cached stream of {@code path}, closing it. */
  void discard(Path path, OpenFile open) {
    String key = path.toUri().getPath();
    if (!streams.asMap().remove(key, open)) {
      closeQuietly(key, open);
    }
  }

  /** Streams currently open. */
  long size() {
    streams.cleanUp();
    return streams.estimatedSize();
  }

  private static void closeQuietly(String path, OpenFile open) {
    if (open == null) {
      return;
    }
    try {
      open.in.close();
    } catch (IOException e) {
      LOG.debug("Closing the HDFS stream of {} failed: {}", path, e.toString());
    }
  }

  @Override
  public void close() {
    streams.invalidateAll();
    streams.cleanUp();
  }
}
