package io.strata.bench;

import com.google.protobuf.ByteString;
import io.strata.client.FileSystem;
import io.strata.client.SetAttributeOptions;
import io.strata.common.WriteTypeAttribute;
import io.strata.common.conf.ConfigType;
import io.strata.common.conf.StrataConfig;
import io.strata.shell.Tcmalloc;
import io.strata.shell.fuse.FuseLauncher;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The write benchmark of {@code bench/run posix}: the writes that prepare data, done in one run on
 * the local folder that is the under store, through a {@code bindfs} passthrough mount of that
 * folder and through a Strata mount (FuseMain as a JVM of its own, as {@code strata fuse mount}
 * starts it) on a one-worker cluster: (1) extracting a tar archive of small files with symbolic and
 * hard links, (2) cloning a local git repository, (3) 4 KiB pwrites at random offsets of an
 * existing file, then fsync and close, (4) {@code rm -rf} of the tree the first row extracted. Each
 * row is checked after it ran (the extracted tree against its source, the clone with git status and
 * fsck, the written pages read back, the removed tree gone from the target and from the under
 * store); a row that fails, or whose check fails, is printed as {@code failed: <reason>} and the
 * benchmark goes on with the next. Every program run and loop is bounded in time and count; every
 * mount is undone and the cluster stopped on the way out, also after a failure. Usage: {@code
 * bench/run posix [--untar-files 20000] [--clone-files 5000] [--pwrite-size 1GB] [--pwrite-seconds
 * 20] [--pwrite-max 10000000] [--rows untar,clone,pwrite,rm] [--fuse-conf key=value,...]
 * [--write-types CACHE_THROUGH,THROUGH,ASYNC_THROUGH] [--dir /tmp]}: one Strata column per write
 * type, each in a folder of the mount that sets it.
 */
final class PosixWriteBench {
  /** The longest one row's program may run. */
  private static final Duration ROW_LIMIT = Duration.ofMinutes(30);

  /**
   * Untar, clone and rm -rf through Strata: at least this much of bindfs's rate, by write type
   * (rm's target is the first, whatever the type); types without one are not judged.
   */
  private static final Map<String, Double> TARGETS =
      Map.of("CACHE_THROUGH", 0.3, "ASYNC_THROUGH", 0.5);

  private static final double RM_TARGET = 0.3;
  private static final String STRATA = "mnt-strata";

  /**
   * Where a row writes: a folder of its own below the local folder or a mount; for Strata, the
   * write type its folder sets (null for the others).
   */
  private record Target(String title, Path root, BenchMount mount, String writeType) {
    boolean strata() {
      return writeType != null;
    }
  }

  /** A row's figures, or why it has none. */
  private record Outcome(double[] figures, String failure) {
    static Outcome of(double... figures) {
      return new Outcome(figures, null);
    }

    static Outcome failed(String why) {
      return new Outcome(null, why);
    }
  }

  private final Command cmd;
  private final List<Target> targets;

  /** The local folder that is the under store; each target's root is a folder of its own in it. */
  private final Path ufs;

  /** Per section, the Strata mount's upcall timers over its row. */
  private final Map<String, String> upcalls = new LinkedHashMap<>();

  private PosixWriteBench(Command cmd, List<Target> targets, Path ufs) {
    this.cmd = cmd;
    this.targets = targets;
    this.ufs = ufs;
  }

  static void run(Map<String, String> opts) throws Exception {
    int untarFiles = Integer.parseInt(opts.getOrDefault("untar-files", "20000"));
    int cloneFiles = Integer.parseInt(opts.getOrDefault("clone-files", "5000"));
    long pwriteSize = ConfigType.parseBytes(opts.getOrDefault("pwrite-size", "1GB"));
    double pwriteSeconds = Double.parseDouble(opts.getOrDefault("pwrite-seconds", "20"));
    long pwriteMax = Long.parseLong(opts.getOrDefault("pwrite-max", "10000000"));
    Set<String> rows = Set.of(opts.getOrDefault("rows", "untar,clone,pwrite,rm").split(","));
    for (String row : rows) {
      if (!Set.of("untar", "clone", "pwrite", "rm").contains(row)) {
        throw new IllegalArgumentException("--rows takes untar, clone, pwrite and rm, not " + row);
      }
    }
    if (rows.contains("rm") && !rows.contains("untar")) {
      throw new IllegalArgumentException(
          "--rows rm removes the tree that the untar row" + " extracted: add untar to --rows");
    }
    if (pwriteSize < RandomPwrites.PAGE) {
      throw new IllegalArgumentException("--pwrite-size must be at least 4 KiB");
    }
    List<String> fuseConf =
        opts.getOrDefault("fuse-conf", "").isEmpty()
            ? List.of()
            : List.of(opts.get("fuse-conf").split(","));
    List<String> writeTypes = new ArrayList<>();
    for (String type :
        opts.getOrDefault("write-types", "CACHE_THROUGH,THROUGH,ASYNC_THROUGH").split(",")) {
      String problem = WriteTypeAttribute.problem("--write-types", type);
      if (problem != null) {
        throw new IllegalArgumentException(problem);
      }
      writeTypes.add(type);
    }
    String fuseClasspath = BenchMount.fuseClasspath();
    BenchMount.requireTools();
    Path base =
        Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-posix");
    Path sources = Files.createDirectories(base.resolve("sources"));
    Path ufs = Files.createDirectories(base.resolve("ufs"));
    Command cmd =
        new Command(Files.createDirectories(base.resolve("programs")), PosixSources.programEnv());
    List<BenchMount> mounts = new ArrayList<>();
    long started = System.nanoTime();
    try {
      Path archive = sources.resolve("files.tar");
      TreeSummary untarSource = null;
      if (rows.contains("untar")) {
        System.err.printf("generating a tar archive of %d files in %s%n", untarFiles, sources);
        PosixSources.archive(sources.resolve("tree"), archive, untarFiles, cmd);
        untarSource = TreeSummary.of(sources.resolve("tree"));
      }
      Path repo = sources.resolve("repo");
      String head = null;
      if (rows.contains("clone")) {
        System.err.printf("generating a git repository of %d files in %s%n", cloneFiles, repo);
        head = PosixSources.gitRepository(repo, cloneFiles, cmd);
      }
      long untarBytes = (long) untarFiles * (PosixSources.MIN_FILE + PosixSources.MAX_FILE) / 2;
      long total = untarBytes + cloneFiles * 8192L + pwriteSize;
      String capacity = Long.toString(total * 12 / 10 + (256 << 20));
      boolean mem = LoadBench.roomInShm(total * 12 / 10 + (256 << 20));
      String tier = mem ? "MEM tier in /dev/shm" : "SSD tier in " + base;
      System.err.println("worker cache: " + tier);
      try (MultiProcessCluster cluster =
          MultiProcessCluster.builder(base)
              .workers(1)
              .property("strata.master.root.ufs", "file://" + ufs)
              .workerProperty(0, "strata.worker.tier.mem.capacity", mem ? capacity : "0")
              .workerProperty(0, "strata.worker.tier.ssd.capacity", mem ? "0" : capacity)
              .start()) {
        // Mounts go before the cluster stops, so that no FuseMain outlives its master.
        try {
          BenchMount.Launcher launcher =
              new BenchMount.Launcher(base, fuseClasspath, cluster, fuseConf);
          BenchMount bindfs = BenchMount.bindfs(ufs, base.resolve("mnt-bindfs"), false);
          mounts.add(bindfs);
          BenchMount strata = launcher.strata(STRATA, false, true);
          mounts.add(strata);
          List<Target> targets =
              new ArrayList<>(
                  List.of(
                      new Target(
                          "local folder",
                          Files.createDirectories(ufs.resolve("local")),
                          null,
                          null),
                      new Target(
                          "bindfs",
                          Files.createDirectories(bindfs.point().resolve("bindfs")),
                          bindfs,
                          null)));
          // One folder of the mount per write type, set on the folder as a user would.
          try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
            for (String type : writeTypes) {
              String folder = "strata-" + type.toLowerCase(Locale.ROOT).replace('_', '-');
              Path root = Files.createDirectories(strata.point().resolve(folder));
              fs.setAttribute(
                  "/" + folder,
                  SetAttributeOptions.defaults()
                      .xattr(WriteTypeAttribute.NAME, ByteString.copyFromUtf8(type)));
              targets.add(new Target("Strata " + type, root, strata, type));
            }
          }
          PosixWriteBench bench = new PosixWriteBench(cmd, targets, ufs);
          List<String> printed = new ArrayList<>();
          if (rows.contains("untar")) {
            printed.add(bench.untar(archive, untarSource, untarFiles));
          }
          if (rows.contains("clone")) {
            printed.add(bench.clone(repo, head, cloneFiles));
          }
          if (rows.contains("pwrite")) {
            printed.add(bench.pwrite(pwriteSize, pwriteSeconds, pwriteMax));
          }
          if (rows.contains("rm")) {
            printed.add(bench.removeTree(untarSource));
          }
          System.out.printf(
              "POSIX write benchmark: untar of %d files of %s-%s in %d folders"
                  + " (with %d symlinks and %d hard links), git clone of %d files in %d commits,"
                  + " 4 KiB pwrites into a file of %s for %s s; one worker (%s); %d cores; Strata"
                  + " mount: FuseMain %s%s, %s, a folder per write type (strata fs"
                  + " setWriteType); bindfs --multithreaded -o kernel_cache"
                  + " of the under-store folder; the source archive and repository on the local"
                  + " disk outside every mount.%n",
              untarFiles,
              ReadBench.human(PosixSources.MIN_FILE),
              ReadBench.human(PosixSources.MAX_FILE),
              PosixSources.ARCHIVE_FOLDERS,
              PosixSources.FILE_SYMLINKS + PosixSources.FOLDER_SYMLINKS,
              PosixSources.HARD_LINKS,
              cloneFiles,
              PosixSources.COMMITS,
              ReadBench.human(pwriteSize),
              Table.f1(pwriteSeconds),
              tier,
              Runtime.getRuntime().availableProcessors(),
              String.join(" ", FuseLauncher.jvmOptions(StrataConfig.load(launcher.settings()))),
              Tcmalloc.applies(System.getenv()) ? ", tcmalloc" : "",
              fuseConf.isEmpty() ? "default options" : "settings " + fuseConf);
          for (String section : printed) {
            System.out.println();
            System.out.print(section);
          }
        } finally {
          BenchMount.closeAll(mounts);
        }
      }
    } finally {
      if (BenchMount.closeAll(mounts)) {
        ReadBench.deleteTree(base);
      } else {
        System.err.println("left " + base + " in place: a mount below it did not go away");
      }
      System.err.printf("posix benchmark took %.1f s%n", (System.nanoTime() - started) / 1e9);
    }
  }

  // ---- 1. untar --------------------------------------------------------------------------

  private String untar(Path archive, TreeSummary source, int files) throws Exception {
    Outcome[] out = new Outcome[targets.size()];
    for (int k = 0; k < targets.size(); k++) {
      Target t = targets.get(k);
      out[k] =
          row(
              "untar",
              t,
              () -> {
                Path dest = Files.createDirectories(t.root().resolve("untar"));
                Command.Result r =
                    cmd.run(
                        List.of("tar", "-xf", archive.toString(), "-C", dest.toString()),
                        null,
                        ROW_LIMIT);
                if (!r.ok()) {
                  return Outcome.failed(reason(r, dest));
                }
                String diff = source.differences(TreeSummary.of(dest));
                if (diff != null) {
                  return Outcome.failed("check: " + diff);
                }
                return Outcome.of(
                    r.seconds(), files / r.seconds(), source.bytes() / 1e6 / r.seconds());
              });
    }
    Table table =
        figures(
            out,
            new String[] {"seconds", "files/s", "MB/s"},
            new boolean[] {false, true, true},
            1,
            false);
    return String.format(
            "1. Untar: tar -xf of the archive (%s) into an empty folder of each"
                + " target, timed until tar exits (no sync); checked by walking the extracted tree:"
                + " files, folders, symlinks, bytes and a checksum of names and contents equal to the"
                + " source's; files/s counts the %d generated files.%n",
            ReadBench.human(Files.size(archive)), files)
        + table.render()
        + upcalls("untar");
  }

  // ---- 2. git clone ----------------------------------------------------------------------

  private String clone(Path source, String head, int files) throws Exception {
    Outcome[] out = new Outcome[targets.size()];
    for (int k = 0; k < targets.size(); k++) {
      Target t = targets.get(k);
      out[k] =
          row(
              "clone",
              t,
              () -> {
                Path dest = Files.createDirectories(t.root().resolve("clone"));
                Path repo = dest.resolve("repo");
                Command.Result r =
                    cmd.run(
                        List.of(
                            "git",
                            "clone",
                            "--no-hardlinks",
                            "-q",
                            source.toString(),
                            repo.toString()),
                        null,
                        ROW_LIMIT);
                if (!r.ok()) {
                  return Outcome.failed(reason(r, dest));
                }
                String failed = checkClone(repo, head, dest);
                return failed != null
                    ? Outcome.failed(failed)
                    : Outcome.of(r.seconds(), files / r.seconds());
              });
    }
    Table table =
        figures(out, new String[] {"seconds", "files/s"}, new boolean[] {false, true}, 1, false);
    return String.format(
            "2. Git clone: git clone --no-hardlinks of a local repository (%d"
                + " files, %d commits, objects packed) into each target, timed until git exits;"
                + " checked with git status --porcelain (empty), git fsck (exit 0) and HEAD equal to"
                + " the source's; files/s counts the %d checked-out files.%n",
            files, PosixSources.COMMITS, files)
        + table.render()
        + upcalls("clone");
  }

  /** Why the clone at {@code repo} is not a whole, clean copy of HEAD, or null when it is. */
  private String checkClone(Path repo, String head, Path dest) throws Exception {
    List<String> git = List.of("git", "-c", "safe.directory=*", "-C", repo.toString());
    Command.Result status = cmd.run(concat(git, "status", "--porcelain"), null, ROW_LIMIT);
    if (!status.ok()) {
      return "status: " + reason(status, dest);
    }
    if (!status.out().isBlank()) {
      long lines = status.out().lines().count();
      return "status: "
          + lines
          + " changed paths, first "
          + status.out().lines().findFirst().orElse("");
    }
    Command.Result fsck = cmd.run(concat(git, "fsck", "--no-progress"), null, ROW_LIMIT);
    if (!fsck.ok()) {
      return "fsck: " + reason(fsck, dest);
    }
    Command.Result rev = cmd.run(concat(git, "rev-parse", "HEAD"), null, ROW_LIMIT);
    if (!rev.ok() || !rev.out().trim().equals(head)) {
      return "HEAD is " + rev.out().trim() + ", expected " + head;
    }
    return null;
  }

  private static List<String> concat(List<String> head, String... tail) {
    List<String> out = new ArrayList<>(head);
    out.addAll(List.of(tail));
    return out;
  }

  // ---- 3. random pwrites -----------------------------------------------------------------

  private String pwrite(long size, double seconds, long max) throws Exception {
    Outcome[] out = new Outcome[targets.size()];
    for (int k = 0; k < targets.size(); k++) {
      Target t = targets.get(k);
      Path file = Files.createDirectories(t.root().resolve("pwrite")).resolve("file.bin");
      // Created through the target, Strata's too (sequential writes of a new file), and
      // written back to disk before the timing.
      try {
        TestTree.writeRandom(file, size, 51);
      } catch (Exception e) {
        out[k] = Outcome.failed("create: " + why(e));
        continue;
      }
      out[k] =
          row(
              "pwrite",
              t,
              () -> {
                RandomPwrites.Result r = RandomPwrites.run(file, size, seconds, max);
                System.err.printf(
                    "%s: %d pwrites in %.2f s, fsync %.3f s, close %.3f s, %d of %d"
                        + " pages read back wrong%n",
                    file,
                    r.writes(),
                    r.writeSeconds(),
                    r.fsyncSeconds(),
                    r.closeSeconds(),
                    r.wrong(),
                    r.checked());
                if (r.wrong() > 0) {
                  return Outcome.failed(
                      "check: " + r.wrong() + " of " + r.checked() + " pages read back wrong");
                }
                return Outcome.of(
                    r.iops(),
                    r.writes(),
                    r.fsyncSeconds() * 1e3,
                    r.closeSeconds() * 1e3,
                    r.checked());
              });
    }
    Table table =
        figures(
            out,
            new String[] {
              "IOPS during the writes",
              "writes",
              "fsync ms",
              "close ms (until close returns)",
              "pages read back, all right"
            },
            new boolean[] {true, false, false, false, false},
            -1,
            false);
    return String.format(
            "3. Random 4 KiB pwrites into an existing file of %s: open O_RDWR,"
                + " 4 KiB-aligned random offsets (fixed seed) from one thread for %s s or %d writes,"
                + " then fsync and close, each timed; then a fresh open reads back up to %d of the"
                + " written pages (the last write of each offset) and a wrong page fails the row. Each"
                + " target's file is created through that target before the timing (Strata's through"
                + " the mount, as a new file written sequentially) and synced to disk.%n",
            ReadBench.human(size), Table.f1(seconds), max, RandomPwrites.SAMPLE)
        + table.render()
        + upcalls("pwrite");
  }

  // ---- 4. rm -rf -------------------------------------------------------------------------

  private String removeTree(TreeSummary source) {
    long entries = source.files() + source.folders() + source.symlinks();
    Outcome[] out = new Outcome[targets.size()];
    for (int k = 0; k < targets.size(); k++) {
      Target t = targets.get(k);
      out[k] =
          row(
              "rm",
              t,
              () -> {
                Path tree = t.root().resolve("untar");
                if (!Files.isDirectory(tree)) {
                  return Outcome.failed("no extracted tree to remove (the untar row failed)");
                }
                Command.Result r = cmd.run(List.of("rm", "-rf", tree.toString()), null, ROW_LIMIT);
                if (!r.ok()) {
                  return Outcome.failed(reason(r, t.root()));
                }
                // The target's folder is a folder of the under store's, under the same name.
                Path inStore = ufs.resolve(t.root().getFileName().toString()).resolve("untar");
                if (Files.exists(tree, LinkOption.NOFOLLOW_LINKS)) {
                  return Outcome.failed("check: the tree is still listed after rm -rf");
                }
                if (Files.exists(inStore, LinkOption.NOFOLLOW_LINKS)) {
                  return Outcome.failed("check: the tree is still in the under store after rm -rf");
                }
                return Outcome.of(r.seconds(), entries / r.seconds());
              });
    }
    Table table =
        figures(out, new String[] {"seconds", "entries/s"}, new boolean[] {false, true}, 1, true);
    return String.format(
            "4. Remove: rm -rf of the tree the untar row extracted (%d files, %d"
                + " folders, %d symlinks), timed until rm exits; checked: the tree is gone from the"
                + " target and from the under store.%n",
            source.files(), source.folders(), source.symlinks())
        + table.render()
        + upcalls("rm");
  }

  // ---- rows and tables -------------------------------------------------------------------

  private interface Body {
    Outcome run() throws Exception;
  }

  /**
   * Runs one target's row after a sync (so that the last row's dirty pages are on disk), turning an
   * exception into a failed row, and keeps the Strata mount's upcall timers over it.
   */
  private Outcome row(String section, Target t, Body body) {
    Map<String, double[]> before = timers(t);
    Outcome out;
    try {
      cmd.check(List.of("sync"), null, ROW_LIMIT);
      out = body.run();
    } catch (Exception e) {
      out = Outcome.failed(why(e));
    }
    Map<String, double[]> after = timers(t);
    if (t.mount() != null && !after.isEmpty()) {
      StringBuilder line = new StringBuilder();
      for (Map.Entry<String, double[]> e : after.entrySet()) {
        double[] was = before.getOrDefault(e.getKey(), new double[2]);
        double calls = e.getValue()[1] - was[1];
        double secs = e.getValue()[0] - was[0];
        if (calls > 0) {
          line.append(line.length() == 0 ? "" : ", ")
              .append(
                  String.format(
                      "%s %.0f x %.1f us (%.2f s)", e.getKey(), calls, secs / calls * 1e6, secs));
        }
      }
      upcalls.put(section + ": " + t.title(), line.length() == 0 ? "none timed" : line.toString());
    }
    System.err.printf(
        "%s on %s: %s%n",
        section, t.title(), out.failure() == null ? Arrays.toString(out.figures()) : out.failure());
    return out;
  }

  /** The upcall timers of a Strata mount; empty for the others or when they cannot be read. */
  private static Map<String, double[]> timers(Target t) {
    if (t.mount() == null) {
      return Map.of();
    }
    try {
      return t.mount().upcallTimers();
    } catch (Exception e) {
      System.err.println("cannot read the upcall timers of " + t.mount().point() + ": " + e);
      return Map.of();
    }
  }

  private String upcalls(String section) {
    StringBuilder out = new StringBuilder();
    for (Target t : targets) {
      String line = upcalls.get(section + ": " + t.title());
      if (line != null) {
        out.append(t.title())
            .append(
                " mount's own upcall timers over its row (calls x mean"
                    + " time in its handlers): ")
            .append(line)
            .append('\n');
      }
    }
    return out.toString();
  }

  /**
   * One table row per measure, a column per target, and for the rates each Strata column over
   * bindfs; a failed target shows its reason in the first row. Targets first, then the ratios, then
   * whether the rates in row {@code judged} meet the targets (-1: no such column; for {@code rm},
   * the rm target whatever the write type).
   */
  private Table figures(Outcome[] out, String[] measures, boolean[] rate, int judged, boolean rm) {
    List<String> header = new ArrayList<>(List.of("measure"));
    for (Target t : targets) {
      header.add(t.title());
    }
    List<Integer> strata = new ArrayList<>();
    for (int k = 0; k < targets.size(); k++) {
      if (targets.get(k).strata()) {
        strata.add(k);
        header.add(targets.get(k).writeType() + "/bindfs");
      }
    }
    if (judged >= 0) {
      header.add("targets");
    }
    Table table = new Table(header.toArray(new String[0]));
    Outcome bindfs = out[1];
    for (int m = 0; m < measures.length; m++) {
      List<String> cells = new ArrayList<>(List.of(measures[m]));
      for (Outcome o : out) {
        cells.add(
            o.failure() != null
                ? (m == 0 ? "failed: " + o.failure() : "-")
                : figure(o.figures()[m]));
      }
      for (int k : strata) {
        cells.add(rate[m] ? ratio(out[k], bindfs, m) : "");
      }
      if (judged >= 0) {
        List<String> verdicts = new ArrayList<>();
        for (int k : strata) {
          String type = targets.get(k).writeType();
          Double target = rm ? Double.valueOf(RM_TARGET) : TARGETS.get(type);
          if (m != judged || target == null) {
            continue;
          }
          String r = ratio(out[k], bindfs, m);
          verdicts.add(
              type
                  + " "
                  + (r.isEmpty()
                      ? "no figure"
                      : out[k].figures()[m] / bindfs.figures()[m] >= target ? "met" : "missed")
                  + " (>= "
                  + target
                  + "x)");
        }
        cells.add(String.join("; ", verdicts));
      }
      table.row(cells.toArray());
    }
    return table;
  }

  private static String ratio(Outcome a, Outcome b, int m) {
    return a.failure() != null || b.failure() != null
        ? ""
        : Table.f2(a.figures()[m] / b.figures()[m]);
  }

  private static String figure(double v) {
    return v == Math.rint(v) && Math.abs(v) >= 1
        ? String.format("%.0f", v)
        : Math.abs(v) >= 10 ? Table.f1(v) : String.format("%.3f", v);
  }

  /**
   * A program's failure in a few words: its first error line without the program's name, with paths
   * relative to {@code dest}, and how many error lines there were.
   */
  private static String reason(Command.Result r, Path dest) {
    if (r.timedOut()) {
      return "killed after " + ROW_LIMIT.toMinutes() + " min";
    }
    if (r.errors().isEmpty()) {
      return "exit " + r.exit();
    }
    String line = r.errors().get(0).replace(dest + "/", "").replace(dest.toString(), ".");
    for (String prefix : new String[] {"tar: ", "fatal: ", "error: "}) {
      if (line.startsWith(prefix)) {
        line = line.substring(prefix.length());
      }
    }
    // tar names the entry first: "./d001/link0: Cannot create symlink to ...".
    int colon = line.indexOf(": ");
    if (colon > 0
        && line.substring(0, colon).contains("/")
        && !line.substring(0, colon).contains(" ")) {
      line = line.substring(colon + 2);
    }
    return shorten(line) + (r.errorLines() > 1 ? "; " + r.errorLines() + " error lines" : "");
  }

  /** An exception in a few words: a file system error's reason, else its message. */
  static String why(Throwable e) {
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return shorten(f.getReason());
    }
    String message = e.getMessage();
    return shorten(message == null || message.isBlank() ? e.getClass().getSimpleName() : message);
  }

  private static String shorten(String s) {
    return s.length() <= 120 ? s : s.substring(0, 117) + "...";
  }
}
