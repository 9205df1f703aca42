package io.strata.bench;

import io.strata.bench.synthetic.SyntheticTree;
import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.client.SyncOption;
import io.strata.proto.LoadMetadataProgress;
import java.util.Map;

/**
 * Large namespaces for the master benchmarks: a generated tree ({@code synthetic://}, see {@link
 * SyntheticTree}) mounted read-only and loaded with the metadata-only load ({@code strata fs load
 * --metadata-only}: the LoadMetadata call, which walks the tree on the master and journals the
 * inodes in batches), so millions of inodes cost neither files on the disk nor a client call each.
 */
final class SyntheticNamespace {
  private SyntheticNamespace() {}

  /** What one load did. */
  record Loaded(long files, long directories, double seconds) {
    double inodesPerSecond() {
      return (files + directories) / seconds;
    }
  }

  /** Mounts {@code tree} read-only at {@code path} and loads the metadata of all of it. */
  static Loaded mountAndLoad(FileSystem fs, String path, SyntheticTree tree, Deadline deadline)
      throws Exception {
    fs.mount(path, tree.uri(), Map.of(), true);
    long start = System.nanoTime();
    long lastShown = start;
    LoadMetadataProgress last = null;
    try (CloseableIterator<LoadMetadataProgress> progress =
        fs.loadMetadata(path, SyncOption.DEFAULT)) {
      while (progress.hasNext()) {
        last = progress.next();
        if (System.nanoTime() - lastShown > 10_000_000_000L || last.getDone()) {
          lastShown = System.nanoTime();
          double s = (lastShown - start) / 1e9;
          System.err.printf(
              "loading %s: %,d of %,d files, %,d directories, %.0f s, %,.0f" + " inodes/s%n",
              path,
              last.getFiles(),
              tree.files(),
              last.getDirectories(),
              s,
              (last.getFiles() + last.getDirectories()) / s);
        }
        deadline.check(
            "loading the metadata of "
                + path
                + " ("
                + last.getFiles()
                + " of "
                + tree.files()
                + " files so far)");
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    if (last == null
        || !last.getDone()
        || last.getFailedCount() > 0
        || last.getFiles() != tree.files()) {
      throw new IllegalStateException(
          "The metadata load of "
              + path
              + " ("
              + tree.uri()
              + ") ended without loading every file: "
              + last);
    }
    return new Loaded(last.getFiles(), last.getDirectories(), seconds);
  }
}
