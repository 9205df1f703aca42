package io.strata.fuse;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local folder where a mount keeps the copies of files open for writing ({@link StagedFile}),
 * and the table of those copies: one per file (by inode number), shared by every handle of it,
 * counted by reference.
 *
 * <p>Bounded: the bytes the copies hold (what was written and not yet written through) never pass
 * {@code maxBytes}; a write that would pass it fails with ENOSPC and changes nothing. Each copy has
 * a note beside it ({@code .info}: the namespace path, inode and start time), so that copies a
 * mount left behind when it was killed before writing them through can be found: {@link
 * #reportLeftovers} names each in the log when a mount starts, and leaves it in place for the user.
 */
final class StagingArea {
  private static final Logger LOG = LoggerFactory.getLogger(StagingArea.class);
  private static final String DATA = ".data";
  private static final String INFO = ".info";

  private final Path dir;
  private final long maxBytes;
  private final AtomicLong held = new AtomicLong();
  private final AtomicLong sequence = new AtomicLong();
  private final String run = Long.toString(System.currentTimeMillis(), 36);
  private final ConcurrentMap<Long, Entry> files = new ConcurrentHashMap<>();

  /** A staged file and the handles that use it. Guarded by the table's map. */
  private static final class Entry {
    final StagedFile file;
    int references = 1;

    Entry(StagedFile file) {
      this.file = file;
    }
  }

  /**
   * @param dir this mount's folder (made when missing)
   * @param maxBytes most bytes the copies may hold at once
   */
  StagingArea(Path dir, long maxBytes) throws IOException {
    this.dir = Files.createDirectories(dir);
    this.maxBytes = maxBytes;
  }

  static long nowNs() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  Path dir() {
    return dir;
  }

  /** Bytes the copies hold now. */
  long heldBytes() {
    return held.get();
  }

  /** How many files have a copy now. */
  int fileCount() {
    return files.size();
  }

  /**
   * Logs, once each, the copies a previous run of a mount left here (it stopped before writing them
   * through); they stay where they are.
   *
   * @return how many there were
   */
  int reportLeftovers() {
    int n = 0;
    try (DirectoryStream<Path> notes = Files.newDirectoryStream(dir, "*" + INFO)) {
      for (Path note : notes) {
        String name = note.getFileName().toString();
        Path data = dir.resolve(name.substring(0, name.length() - INFO.length()) + DATA);
        String about = Files.readString(note, StandardCharsets.UTF_8).strip().replace('\n', ' ');
        LOG.warn(
            "A staged copy was not written through (the mount stopped before the file"
                + " was closed or synced): {}; its bytes are in {} (written ranges only; the rest"
                + " is the file's content in Strata). Recover what you need, then delete both"
                + " files.",
            about,
            data);
        n++;
      }
    } catch (IOException e) {
      LOG.warn("Cannot look for staged copies left in {}: {}", dir, e.toString());
    }
    return n;
  }

  /**
   * The copy of the file {@code inode}, taking one reference to it: the existing one, or a new one
   * that {@code starter} makes.
   */
  StagedFile acquire(long inode, Starter starter) throws IOException {
    Entry[] made = new Entry[1];
    IOException[] failed = new IOException[1];
    Entry e =
        files.compute(
            inode,
            (k, existing) -> {
              if (existing != null) {
                existing.references++;
                return existing;
              }
              try {
                made[0] = new Entry(starter.start(newData()));
                return made[0];
              } catch (IOException ex) {
                failed[0] = ex;
                return null;
              }
            });
    if (failed[0] != null) {
      throw failed[0];
    }
    if (made[0] != null) {
      writeNote(e.file);
    }
    return e.file;
  }

  /** Makes a new staged file whose bytes live at the path given. */
  @FunctionalInterface
  interface Starter {
    StagedFile start(Path data) throws IOException;
  }

  /** The copy of file {@code inode} if one is open, else null; no reference is taken. */
  StagedFile get(long inode) {
    Entry e = files.get(inode);
    return e == null ? null : e.file;
  }

  /** Every copy open now. */
  List<StagedFile> all() {
    List<StagedFile> out = new ArrayList<>();
    for (Entry e : files.values()) {
      out.add(e.file);
    }
    return out;
  }

  /**
   * Drops one reference; the last closes the copy (see {@link StagedFile#close}) and removes its
   * note unless the copy is kept.
   *
   * @return the local file kept because it holds changes not written through, or null
   */
  Path release(StagedFile file) throws IOException {
    boolean[] last = {false};
    files.computeIfPresent(
        file.inode(),
        (k, e) -> {
          if (e.file != file) {
            return e;
          }
          if (--e.references == 0) {
            last[0] = true;
            return null;
          }
          return e;
        });
    if (!last[0]) {
      return null;
    }
    Path kept = file.close();
    if (kept == null) {
      Files.deleteIfExists(noteOf(file.data()));
    }
    return kept;
  }

  private Path newData() {
    return dir.resolve(run + "-" + sequence.incrementAndGet() + DATA);
  }

  private static Path noteOf(Path data) {
    String name = data.getFileName().toString();
    return data.resolveSibling(name.substring(0, name.length() - DATA.length()) + INFO);
  }

  private void writeNote(StagedFile f) {
    FileInfo base = f.base();
    String note =
        "path "
            + f.path()
            + "\ninode "
            + f.inode()
            + "\nstarted "
            + Instant.now()
            + "\nbase "
            + (base == null
                ? "none (a new file)"
                : "version " + base.getFileId() + ", " + base.getLength() + " bytes")
            + "\n";
    try {
      Files.writeString(noteOf(f.data()), note, StandardCharsets.UTF_8);
    } catch (IOException e) {
      LOG.warn(
          "Cannot write the note of the staged copy {} of {}: {}",
          f.data(),
          f.path(),
          e.toString());
    }
  }

  /**
   * A new file was committed and has the master's inode number now: its copy is found by that
   * number from here on (by whoever opens the file next, through any name).
   */
  void committed(StagedFile file, long masterInode) {
    // The caller holds a reference to the copy (a handle being flushed), so the entry outlives
    // the move; it is under both numbers for a moment, never under neither.
    long provisional = file.inode();
    Entry e = files.get(provisional);
    if (e == null || e.file != file) {
      file.committedAs(masterInode);
      return;
    }
    files.put(masterInode, e);
    file.committedAs(masterInode);
    files.remove(provisional, e);
  }

  /** Rewrites a copy's note after its path changed (a rename). */
  void noteMoved(StagedFile f) {
    writeNote(f);
  }

  /**
   * Reserves room for {@code bytes} more (the most a write can add), or fails with ENOSPC naming
   * the bound; {@link #settle} then gives back what the write did not add.
   */
  void reserve(long bytes) throws StrataException {
    long now = held.addAndGet(bytes);
    if (now > maxBytes) {
      held.addAndGet(-bytes);
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          PosixError.ENOSPC,
          "The mount's staged copies would hold "
              + now
              + " bytes, over"
              + " strata.fuse.write.staging.max.size ("
              + maxBytes
              + "): close or sync open files"
              + " so they are written through, or raise the bound");
    }
  }

  /** After a write that reserved {@code reserved} bytes: it added {@code added} to its copy. */
  void settle(long reserved, long added) {
    held.addAndGet(added - reserved);
  }

  /** Bytes no longer held (a truncation, or a copy written through or closed). */
  void release(long bytes) {
    held.addAndGet(-bytes);
  }
}
