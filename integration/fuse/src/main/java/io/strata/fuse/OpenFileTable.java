package io.strata.fuse;

import java.io.Closeable;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The open files of a mount: one shared reader per file id, with a count of the handles that use
 * it. Every handle of a file, from any process or thread, reads through the same reader, so they
 * share its connections and whatever it caches.
 *
 * <p>Guarantees: {@link #reader} is a lock-free map lookup, so readers of one file never wait for
 * each other here; {@link #acquire} and {@link #release} change a file's count atomically, and the
 * reader is closed exactly once, when the last handle is released. A file opened while its last
 * handle is being released gets a fresh reader.
 *
 * @param <R> the reader type
 */
final class OpenFileTable<R extends Closeable> {
  /** Opens a new reader for a file that has no open handle yet. */
  @FunctionalInterface
  interface Opener<R> {
    R open() throws IOException;
  }

  private static final class Entry<R> {
    final R reader;
    // Changed only inside the map's compute functions, which hold the entry's bin lock.
    int references = 1;

    Entry(R reader) {
      this.reader = reader;
    }
  }

  private final ConcurrentMap<Long, Entry<R>> entries = new ConcurrentHashMap<>();

  /**
   * Takes a reference to the reader of {@code fileId}, opening one with {@code opener} when the
   * file has none. The opener runs outside any lock; when two handles race to open the same file,
   * one reader wins and the other is closed.
   */
  R acquire(long fileId, Opener<R> opener) throws IOException {
    Entry<R> existing =
        entries.computeIfPresent(
            fileId,
            (id, e) -> {
              e.references++;
              return e;
            });
    if (existing != null) {
      return existing.reader;
    }
    Entry<R> mine = new Entry<>(opener.open());
    Entry<R> winner =
        entries.merge(
            fileId,
            mine,
            (old, ignored) -> {
              old.references++;
              return old;
            });
    if (winner != mine) {
      mine.reader.close();
    }
    return winner.reader;
  }

  /** The shared reader of an open file, or null when no handle of it is open. */
  R reader(long fileId) {
    Entry<R> e = entries.get(fileId);
    return e == null ? null : e.reader;
  }

  /** Drops one reference; the last one closes the reader. Unknown ids are ignored. */
  void release(long fileId) throws IOException {
    Object[] closed = new Object[1];
    entries.computeIfPresent(
        fileId,
        (id, e) -> {
          if (--e.references > 0) {
            return e;
          }
          closed[0] = e.reader;
          return null;
        });
    if (closed[0] != null) {
      ((Closeable) closed[0]).close();
    }
  }

  /** How many handles use the reader of {@code fileId} (0 when the file is not open). */
  int references(long fileId) {
    int[] n = new int[1];
    entries.computeIfPresent(
        fileId,
        (id, e) -> {
          n[0] = e.references;
          return e;
        });
    return n[0];
  }

  /** How many files have a reader open. */
  int size() {
    return entries.size();
  }

  /** Calls {@code action} with every reader open now. */
  void forEachReader(java.util.function.Consumer<R> action) {
    for (Entry<R> e : entries.values()) {
      action.accept(e.reader);
    }
  }
}
