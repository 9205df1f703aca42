package io.strata.underfs.hdfs;

import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.NoSuchElementException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * The children of one HDFS directory, fetched from the namenode a page at a time (dfs.ls.limit
 * entries, 1,000 by default) as the caller advances, so a directory of millions of entries is never
 * held in memory. In-progress Strata writes ({@value HdfsUnderFileSystem#TEMP_MARKER}) are left
 * out. A failure while fetching a page surfaces from {@link #hasNext()} as an {@link
 * UncheckedIOException} wrapping the translated error.
 */
final class HdfsListing implements CloseableIterator<UfsStatus> {
  private final RemoteIterator<FileStatus> remote;
  private final HdfsErrors errors;
  private final String uri;
  private UfsStatus next;
  private boolean closed;

  HdfsListing(RemoteIterator<FileStatus> remote, HdfsErrors errors, String uri) {
    this.remote = remote;
    this.errors = errors;
    this.uri = uri;
  }

  @Override
  public boolean hasNext() {
    try {
      while (next == null && !closed && remote.hasNext()) {
        FileStatus status = remote.next();
        if (!status.getPath().getName().contains(HdfsUnderFileSystem.TEMP_MARKER)) {
          next = HdfsUnderFileSystem.toStatus(status);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(errors.translate(e, uri, "list"));
    }
    return next != null;
  }

  @Override
  public UfsStatus next() {
    if (!hasNext()) {
      throw new NoSuchElementException("No more entries in " + uri);
    }
    UfsStatus status = next;
    next = null;
    return status;
  }

  /** Stops the listing; the namenode keeps no state for it, so nothing else is released. */
  @Override
  public void close() {
    closed = true;
    next = null;
  }
}
