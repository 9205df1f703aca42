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
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The checkpoints folder of the journal. A checkpoint is {@code checkpoints/<sequence>/db/}, a
 * RocksDB checkpoint of the metastore with every entry up to {@code sequence} applied, and
 * {@code checkpoints/<sequence>/HEADER}, a journal header (kind {@code "checkpoint"},
 * {@code first_sequence} = that sequence) written last and atomically: a folder without a valid
 * header is a checkpoint cut short by a crash and is ignored, then removed.
 */
final class Checkpoints {
  private static final Logger LOG = LoggerFactory.getLogger(Checkpoints.class);
  static final String HEADER = "HEADER";
  static final String DB = "db";

  /** A complete checkpoint. */
  record Found(long sequence, Path dir, JournalHeader header) {
    Path db() {
      return dir.resolve(DB);
    }
  }

  private final Path root;

  Checkpoints(Path root) throws IOException {
    this.root = root;
    Files.createDirectories(root);
  }

  /** The complete checkpoints, newest first. */
  List<Found> complete() throws IOException {
    List<Found> found = new ArrayList<>();
    for (Path dir : numbered()) {
      Path header = dir.resolve(HEADER);
      if (!Files.isRegularFile(header)) {
        continue;
      }
      JournalHeader h = Journal.readHeaderFile(header);
      Journal.checkHeader(h, Journal.CHECKPOINT_KIND, header);
      found.add(new Found(Long.parseLong(dir.getFileName().toString()), dir, h));
    }
    found.sort(Comparator.comparingLong(Found::sequence).reversed());
    return found;
  }

  Optional<Found> newest() throws IOException {
    List<Found> all = complete();
    return all.isEmpty() ? Optional.empty() : Optional.of(all.get(0));
  }

  private List<Path> numbered() throws IOException {
    List<Path> dirs = new ArrayList<>();
    try (Stream<Path> list = Files.list(root)) {
      for (Path p : (Iterable<Path>) list::iterator) {
        if (Files.isDirectory(p) && p.getFileName().toString().matches("\\d+")) {
          dirs.add(p);
        }
      }
    }
    return dirs;
  }

  /** Checkpoints the store, whose last applied entry is {@code sequence}. */
  Found take(InodeStore store, long sequence) throws IOException {
    Path dir = root.resolve(Long.toString(sequence));
    if (Files.exists(dir)) {
      deleteTree(dir);
    }
    Files.createDirectories(dir);
    store.checkpointTo(dir.resolve(DB));
    JournalHeader header = Journal.header(Journal.CHECKPOINT_KIND, sequence);
    Journal.writeHeaderFile(dir.resolve(HEADER), header);
    return new Found(sequence, dir, header);
  }

  /** Replaces the folder {@code target} with a copy of a checkpoint's database. */
  static void restore(Found checkpoint, Path target) throws IOException {
    deleteTree(target);
    Files.createDirectories(target);
    try (Stream<Path> files = Files.list(checkpoint.db())) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.copy(f, target.resolve(f.getFileName()));
      }
    }
  }

  /** Keeps the {@code keep} newest complete checkpoints; removes older and incomplete ones. */
  void prune(int keep) throws IOException {
    List<Found> all = complete();
    List<Path> keepDirs = new ArrayList<>();
    for (int i = 0; i < Math.min(keep, all.size()); i++) {
      keepDirs.add(all.get(i).dir());
    }
    for (Path dir : numbered()) {
      if (!keepDirs.contains(dir)) {
        LOG.debug("Removing old or incomplete checkpoint {}", dir);
        deleteTree(dir);
      }
    }
  }

  static void deleteTree(Path dir) throws IOException {
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
