package io.strata.master.journal;

import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshots of the replicated journal, in the Raft group's state-machine folder ({@code
 * <journal dir>/raft/<group>/sm/}). A snapshot is {@code <term>_<index>/db/}, a RocksDB checkpoint
 * of the metastore with every log entry up to that index applied, and {@code <term>_<index>/HEADER}
 * ({@link HeaderFile}), written last: a folder without a valid header is a snapshot cut short by a
 * crash and is ignored, then removed. The leader sends a lagging follower the newest snapshot's
 * files under the same relative names, so a follower's folder has the same layout.
 *
 * <p>A backup is the same pair ({@code db/} and a {@code HEADER} of kind "backup") in a folder of
 * its own.
 */
public final class Snapshots {
  private static final Logger LOG = LoggerFactory.getLogger(Snapshots.class);
  public static final String DB = "db";
  private static final Pattern NAME = Pattern.compile("(\\d+)_(\\d+)");

  /** A complete snapshot or backup. */
  public record Found(long term, long index, Path dir, JournalHeader header) {
    public Path db() {
      return dir.resolve(DB);
    }

    public long sequence() {
      return header.getFirstSequence();
    }
  }

  private final Path root;

  public Snapshots(Path root) throws IOException {
    this.root = root;
    Files.createDirectories(root);
  }

  public Path root() {
    return root;
  }

  /** The complete snapshots, newest first; fails when a header is damaged or too new. */
  public List<Found> complete() throws IOException {
    List<Found> found = new ArrayList<>();
    for (Path dir : named()) {
      Path header = dir.resolve(HeaderFile.NAME);
      if (!Files.isRegularFile(header)) {
        continue;
      }
      found.add(read(dir));
    }
    found.sort(Comparator.comparingLong(Found::index).reversed());
    return found;
  }

  public Optional<Found> newest() throws IOException {
    List<Found> all = complete();
    return all.isEmpty() ? Optional.empty() : Optional.of(all.get(0));
  }

  /** Reads the header of a snapshot or backup folder and checks that this release reads it. */
  public static Found read(Path dir) throws IOException {
    Path file = dir.resolve(HeaderFile.NAME);
    if (!Files.isRegularFile(file)) {
      throw new IOException(
          dir + " is not a Strata snapshot or backup: it has no " + HeaderFile.NAME + " file");
    }
    JournalHeader h = HeaderFile.read(file);
    HeaderFile.check(h, file);
    if (!Files.isDirectory(dir.resolve(DB))) {
      throw new IOException(dir + " has a header but no " + DB + "/ folder");
    }
    return new Found(h.getRaftTerm(), h.getRaftIndex(), dir, h);
  }

  private List<Path> named() throws IOException {
    List<Path> dirs = new ArrayList<>();
    try (Stream<Path> list = Files.list(root)) {
      for (Path p : (Iterable<Path>) list::iterator) {
        if (Files.isDirectory(p) && NAME.matcher(p.getFileName().toString()).matches()) {
          dirs.add(p);
        }
      }
    }
    return dirs;
  }

  /** Snapshots the store, whose last applied entry is at {@code term}/{@code index}. */
  public Found take(InodeStore store, long term, long index) throws IOException {
    Path dir = root.resolve(term + "_" + index);
    return write(store, dir, HeaderFile.SNAPSHOT_KIND, term, index);
  }

  /**
   * Writes the store's state into {@code dir} (which must not hold anything yet) with a header of
   * the given kind. The caller keeps the store from changing meanwhile.
   */
  public static Found write(InodeStore store, Path dir, String kind, long term, long index)
      throws IOException {
    if (Files.exists(dir)) {
      deleteTree(dir);
    }
    Files.createDirectories(dir);
    store.checkpointTo(dir.resolve(DB));
    JournalHeader header =
        HeaderFile.newHeader(kind, store.layoutVersion())
            .setFirstSequence(store.appliedSequence())
            .setRaftTerm(term)
            .setRaftIndex(index)
            .setInodeCount(store.inodeCount())
            .build();
    HeaderFile.write(dir.resolve(HeaderFile.NAME), header);
    return new Found(term, index, dir, header);
  }

  /** The regular files of a snapshot, for sending it to a follower. */
  public static List<Path> files(Found snapshot) throws IOException {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(snapshot.dir())) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        if (Files.isRegularFile(p) && !p.getFileName().toString().endsWith(".md5")) {
          files.add(p);
        }
      }
    }
    return files;
  }

  /** Keeps the {@code keep} newest complete snapshots; removes older and incomplete ones. */
  public void prune(int keep) throws IOException {
    List<Found> all = complete();
    List<Path> keepDirs = new ArrayList<>();
    for (int i = 0; i < Math.min(keep, all.size()); i++) {
      keepDirs.add(all.get(i).dir());
    }
    for (Path dir : named()) {
      if (!keepDirs.contains(dir)) {
        LOG.debug("Removing old or incomplete snapshot {}", dir);
        deleteTree(dir);
      }
    }
  }

  public static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
