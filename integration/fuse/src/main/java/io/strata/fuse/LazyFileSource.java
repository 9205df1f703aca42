package io.strata.fuse;

import io.strata.client.FileInStream;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The source of one open file whose client stream is made only when a read reaches it, from the
 * status (with its blocks) the open found in the metadata cache. An open the kernel serves from its
 * page cache (keep_cache), or one that reads nothing, then costs nothing beyond the handle.
 *
 * <p>Guarantees: the stream is opened at most once, by the first read; it must be the version the
 * open saw (same file id), otherwise reads fail with STALE (ESTALE) rather than serve another
 * version; reads after {@link #close} fail. Reads of an opened stream take no lock.
 */
final class LazyFileSource implements PositionedSource {
  /** Opens the file's stream (a master call). */
  @FunctionalInterface
  interface Opener {
    Opened open() throws IOException;
  }

  /** An opened stream and the id of the version it reads. */
  record Opened(long fileId, PositionedSource source) {
    static Opened of(FileInStream in) {
      return new Opened(in.fileId(), PositionedSource.of(in));
    }
  }

  private volatile String path;
  private final long fileId;
  private final long length;
  private volatile Opener opener;
  private volatile PositionedSource in;
  private volatile boolean closed;

  /** Streams of the file's old names ({@link #moved}), closed with this source. Guarded by this. */
  private final java.util.List<PositionedSource> retired = new java.util.ArrayList<>();

  /**
   * @param path the namespace path, for messages
   * @param fileId the id of the version that was opened
   * @param length that version's length
   */
  LazyFileSource(String path, long fileId, long length, Opener opener) {
    this.path = path;
    this.fileId = fileId;
    this.length = length;
    this.opener = opener;
  }

  @Override
  public int read(long position, byte[] b, int off, int len) throws IOException {
    return stream().read(position, b, off, len);
  }

  private PositionedSource stream() throws IOException {
    PositionedSource s = in;
    if (s != null && !closed) {
      return s;
    }
    synchronized (this) {
      if (closed) {
        throw new IOException("Reader of " + path + " is closed");
      }
      if (in == null) {
        Opened opened = opener.open();
        if (opened.fileId() != fileId) {
          opened.source().close();
          throw new StrataException(
              ErrorCode.STALE,
              path
                  + " was replaced since it was opened"
                  + " (file id "
                  + fileId
                  + ", now "
                  + opened.fileId()
                  + "); open it again");
        }
        in = opened.source();
      }
      return in;
    }
  }

  /**
   * As the stream says, opening it first: the opener no longer asks the master (the status the open
   * used carries what the stream needs), so a first read can already go straight to a local block
   * file. False once closed, or when the stream cannot be opened (the read reports why).
   */
  @Override
  public boolean readsLocally(long position) {
    if (closed) {
      return false;
    }
    try {
      return stream().readsLocally(position);
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public int readLocally(long position, ByteBuffer dst) throws IOException {
    return stream().readLocally(position, dst);
  }

  @Override
  public long length() {
    return length;
  }

  /** The namespace path the file is read by. */
  String path() {
    return path;
  }

  /**
   * The file was renamed (by this mount): later reads open a stream by its new name, whose
   * under-store path is the one the file now has; a stream already open stays usable for reads in
   * flight and is closed with this source.
   */
  synchronized void moved(String newPath, Opener newOpener) {
    path = newPath;
    opener = newOpener;
    if (in != null) {
      retired.add(in);
      in = null;
    }
  }

  /** Whether a read has opened the stream (for tests). */
  boolean opened() {
    return in != null;
  }

  @Override
  public synchronized void close() throws IOException {
    closed = true;
    if (in != null) {
      in.close();
    }
    for (PositionedSource old : retired) {
      old.close();
    }
    retired.clear();
  }
}
