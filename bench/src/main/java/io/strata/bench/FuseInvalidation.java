package io.strata.bench;

import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.SetAttributeOptions;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The invalidation row of {@code bench/run fuse}: how long after a change is made in the namespace
 * a mount at its default settings shows it. A second client changes a path (sets a file's
 * modification time, creates a file, deletes one) right after the mount has cached it, and a reader
 * polls the path through the mount every millisecond until the change shows. The same is done on
 * the under-store folder directly and polled through bindfs (whose kernel caches expire after 1 s),
 * as a reference. Bounded: {@link #SAMPLES} changes of each kind, each polled for at most {@link
 * #SAMPLE_LIMIT_MS} (counted at that when it times out), and the whole table stops after {@link
 * #TOTAL_LIMIT_NANOS}.
 */
final class FuseInvalidation {
  static final int SAMPLES = 70;
  private static final long SAMPLE_LIMIT_MS = 5_000;
  private static final long TOTAL_LIMIT_NANOS = TimeUnit.MINUTES.toNanos(5);

  /** Folder of the under store (and namespace) the changes are made in. */
  static final String FOLDER = "inval";

  private final FileSystem fs;
  private final Path ufs;
  private final Path strata;
  private final Path bindfs;
  private final long deadline = System.nanoTime() + TOTAL_LIMIT_NANOS;

  /**
   * @param ufs the under store's root; {@link #FOLDER} holds files {@code m0..}, {@code d0..} and
   *     {@code e0..}
   * @param strata the root of a Strata mount at default settings
   * @param bindfs the root of a bindfs mount of {@code ufs}
   */
  FuseInvalidation(FileSystem fs, Path ufs, Path strata, Path bindfs) {
    this.fs = fs;
    this.ufs = ufs;
    this.strata = strata;
    this.bindfs = bindfs;
  }

  /** Creates the files the changes start from, before the cluster loads the under store. */
  static void prepare(Path ufs) throws Exception {
    Path folder = Files.createDirectories(ufs.resolve(FOLDER));
    for (int i = 0; i < SAMPLES; i++) {
      Files.write(folder.resolve("m" + i), new byte[] {1});
      // Files deleted through Strata (d) and directly (e): a delete through Strata removes
      // the under-store file too.
      Files.write(folder.resolve("d" + i), new byte[] {2});
      Files.write(folder.resolve("e" + i), new byte[] {2});
    }
  }

  /** One change of a path, made elsewhere, and how it shows through a mount. */
  private interface Change {
    void make() throws Exception;

    boolean seen();
  }

  Table run() throws Exception {
    Table t =
        new Table("change", "through", "samples", "p50 ms", "p90 ms", "p99 ms", "max ms", "target");
    List<Double> all = new ArrayList<>();
    for (String kind : List.of("modification time set", "file created", "file deleted")) {
      List<Double> viaStrata = new ArrayList<>();
      List<Double> viaBindfs = new ArrayList<>();
      for (int i = 0; i < SAMPLES && System.nanoTime() < deadline; i++) {
        viaStrata.add(sample(strataChange(kind, i)));
        viaBindfs.add(sample(directChange(kind, i)));
      }
      all.addAll(viaStrata);
      row(t, kind, "Strata (another client)", viaStrata, "");
      row(t, kind, "bindfs (under store)", viaBindfs, "");
    }
    row(t, "all", "Strata (another client)", all, "p99 <= 100 ms");
    return t;
  }

  private static void row(Table t, String kind, String through, List<Double> ms, String target) {
    List<Double> sorted = new ArrayList<>(ms);
    Collections.sort(sorted);
    double p99 = percentile(sorted, 0.99);
    t.row(
        kind,
        through,
        sorted.size(),
        Table.f1(percentile(sorted, 0.5)),
        Table.f1(percentile(sorted, 0.9)),
        Table.f1(p99),
        Table.f1(sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1)),
        target.isEmpty() ? "" : (p99 <= 100 ? "met" : "missed") + " (" + target + ")");
  }

  private static double percentile(List<Double> sorted, double p) {
    if (sorted.isEmpty()) {
      return 0;
    }
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p * sorted.size()) - 1));
  }

  /** Makes the change and polls until it shows; milliseconds from the change's return. */
  private static double sample(Change c) throws Exception {
    c.make();
    long start = System.nanoTime();
    long limit = start + TimeUnit.MILLISECONDS.toNanos(SAMPLE_LIMIT_MS);
    while (!c.seen()) {
      if (System.nanoTime() > limit) {
        return SAMPLE_LIMIT_MS;
      }
      Thread.sleep(1);
    }
    return (System.nanoTime() - start) / 1e6;
  }

  /** A change made through the Java client, polled through the Strata mount. */
  private Change strataChange(String kind, int i) throws Exception {
    return change(
        kind,
        i,
        strata,
        "d",
        path -> {
          String p = "/" + FOLDER + "/" + path;
          switch (kind) {
            case "modification time set" ->
                fs.setAttribute(p, SetAttributeOptions.defaults().modificationTimeMs(mtimeOf(i)));
            case "file created" -> {
              try (FileOutStream out = fs.createFile(p)) {
                out.write(new byte[] {3});
              }
            }
            default -> fs.delete(p, false);
          }
        });
  }

  /** The same change made in the under-store folder directly, polled through bindfs. */
  private Change directChange(String kind, int i) throws Exception {
    return change(
        kind,
        i,
        bindfs,
        "e",
        path -> {
          Path p = ufs.resolve(FOLDER).resolve(path);
          switch (kind) {
            case "modification time set" ->
                Files.setLastModifiedTime(p, FileTime.fromMillis(mtimeOf(i)));
            case "file created" -> Files.write(p, new byte[] {3});
            default -> Files.delete(p);
          }
        });
  }

  @FunctionalInterface
  private interface Maker {
    void make(String path) throws Exception;
  }

  /**
   * The change of sample {@code i} of a kind, whose path is first looked at through {@code root}
   * (so the mount caches it), and how it shows there; a file deleted has the name {@code deleted}
   * followed by {@code i}.
   */
  private static Change change(String kind, int i, Path root, String deleted, Maker maker)
      throws Exception {
    String name =
        switch (kind) {
          case "modification time set" -> "m" + i;
          case "file created" -> "c" + i + "-" + root.getFileName();
          default -> deleted + i;
        };
    Path seenAt = root.resolve(FOLDER).resolve(name);
    BooleanSupplier seen;
    switch (kind) {
      case "modification time set" -> {
        Files.getLastModifiedTime(seenAt);
        seen = () -> mtimeThrough(seenAt) == mtimeOf(i);
      }
      case "file created" -> {
        Files.exists(seenAt, LinkOption.NOFOLLOW_LINKS);
        seen = () -> Files.exists(seenAt, LinkOption.NOFOLLOW_LINKS);
      }
      default -> {
        Files.getLastModifiedTime(seenAt);
        seen = () -> !Files.exists(seenAt, LinkOption.NOFOLLOW_LINKS);
      }
    }
    return new Change() {
      @Override
      public void make() throws Exception {
        maker.make(name);
      }

      @Override
      public boolean seen() {
        return seen.getAsBoolean();
      }
    };
  }

  /** A modification time no file of the folder has yet, whole seconds (bindfs keeps those). */
  private static long mtimeOf(int i) {
    return 1_000_000_000_000L + i * 1000L;
  }

  private static long mtimeThrough(Path p) {
    try {
      return Files.getLastModifiedTime(p).toMillis();
    } catch (Exception e) {
      return -1;
    }
  }
}
