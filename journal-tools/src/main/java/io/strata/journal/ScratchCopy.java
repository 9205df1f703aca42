package io.strata.journal;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.master.metastore.InodeStore;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A throw-away copy of a metastore database in a scratch folder, so that checks and replays never
 * touch the folder being inspected (opening RocksDB writes to its folder, and a replay changes the
 * database). SST files, which RocksDB never changes once written, are hard-linked when the scratch
 * folder is on the same file system, as RocksDB's own checkpoints do; every other file is copied.
 * The copy is deleted on close.
 */
final class ScratchCopy implements Closeable {
  /** Inode cache of a store opened for checking: a replay touches each inode a few times. */
  private static final int CACHE_INODES = 10_000;

  private final Path root;
  private final Path db;

  private ScratchCopy(Path root, Path db) {
    this.root = root;
    this.db = db;
  }

  /** A copy of {@code source}, a RocksDB folder. */
  static ScratchCopy of(Path source, Path scratchRoot) throws IOException {
    ScratchCopy copy = empty(scratchRoot);
    try {
      copyTree(source, copy.db);
    } catch (IOException | RuntimeException e) {
      copy.close();
      throw e;
    }
    return copy;
  }

  /** A folder for a new, empty database. */
  static ScratchCopy empty(Path scratchRoot) throws IOException {
    Files.createDirectories(scratchRoot);
    Path root = Files.createTempDirectory(scratchRoot, "strata-journal-");
    return new ScratchCopy(root, root.resolve("db"));
  }

  Path db() {
    return db;
  }

  /** Opens the copy as the master's metastore (creating it when empty). */
  InodeStore open() throws IOException {
    return InodeStore.open(db, CACHE_INODES, new SimpleMeterRegistry());
  }

  private static void copyTree(Path source, Path target) throws IOException {
    Files.walkFileTree(
        source,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            Files.createDirectories(target.resolve(source.relativize(dir).toString()));
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Path to = target.resolve(source.relativize(file).toString());
            if (file.getFileName().toString().endsWith(".sst")) {
              try {
                Files.createLink(to, file);
                return FileVisitResult.CONTINUE;
              } catch (IOException | UnsupportedOperationException e) {
                // Another file system, or no hard links: copy instead.
              }
            }
            Files.copy(file, to);
            return FileVisitResult.CONTINUE;
          }
        });
  }

  @Override
  public void close() throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}
