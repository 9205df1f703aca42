package io.strata.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The inputs of {@code bench/run posix}, generated once per run on the local disk outside every
 * mount, the same for the same counts: a tar archive of small files with symbolic and hard links,
 * and a git repository of a few commits. Both are deterministic (fixed seeds, and for the archive
 * and the commits fixed times and owners), so two runs extract and clone the same bytes.
 */
final class PosixSources {
  /** Folders of the archive's files. */
  static final int ARCHIVE_FOLDERS = 200;

  /** Symbolic links in the archive: to files of the same folder, and to a sibling folder. */
  static final int FILE_SYMLINKS = 6;

  static final int FOLDER_SYMLINKS = 2;

  /** Hard links in the archive, to files of other folders. */
  static final int HARD_LINKS = 8;

  static final int MIN_FILE = 1024;
  static final int MAX_FILE = 16 * 1024;

  /** Commits of the repository: two add files, the third changes every tenth file. */
  static final int COMMITS = 3;

  /** Seconds since the epoch of every archive entry and commit: 2026-01-01T00:00:00Z. */
  private static final long EPOCH = 1_767_225_600L;

  private static final Duration LIMIT = Duration.ofMinutes(30);
  private static final String[] WORDS = {
    "block", "cache", "worker", "master", "inode", "read", "write", "page", "tier", "mount",
    "journal", "lease", "offset", "length", "fsync", "return", "final", "static", "long", "int",
    "if", "else", "for", "while", "null", "new", "throw", "try", "catch", "path", "file", "folder",
    "=", "==", "+", "{", "}", "(", ")", ";"
  };

  private PosixSources() {}

  /** The environment of every program the benchmark runs: no user or system git settings. */
  static Map<String, String> programEnv() {
    String date = "@" + EPOCH + " +0000";
    return Map.of(
        "LC_ALL",
        "C",
        "GIT_CONFIG_NOSYSTEM",
        "1",
        "GIT_CONFIG_GLOBAL",
        "/dev/null",
        "GIT_AUTHOR_DATE",
        date,
        "GIT_COMMITTER_DATE",
        date);
  }

  /**
   * Writes {@code count} files of {@link #MIN_FILE}..{@link #MAX_FILE} random bytes in {@link
   * #ARCHIVE_FOLDERS} folders below {@code tree}, adds the links, and packs the tree into the
   * uncompressed archive {@code archive} with GNU tar (names sorted, one time, owner 0).
   */
  static void archive(Path tree, Path archive, int count, Command cmd) throws Exception {
    Random random = new Random(21);
    byte[] buf = new byte[MAX_FILE];
    int folders = Math.min(ARCHIVE_FOLDERS, Math.max(1, count));
    for (int d = 0; d < folders; d++) {
      Files.createDirectories(tree.resolve(folder(d)));
    }
    for (int i = 0; i < count; i++) {
      int size = MIN_FILE + random.nextInt(MAX_FILE - MIN_FILE + 1);
      random.nextBytes(buf);
      try (OutputStream out = Files.newOutputStream(tree.resolve(file(i, folders)))) {
        out.write(buf, 0, size);
      }
    }
    // Links as real archives have them: a symlink beside its file, one to a sibling folder
    // (libraries' versioned names, "latest" folders) and hard links across folders.
    for (int k = 0; k < FILE_SYMLINKS && k < count; k++) {
      int i = k * (count / FILE_SYMLINKS);
      Path target = tree.resolve(file(i, folders));
      Files.createSymbolicLink(target.resolveSibling("link" + k), target.getFileName());
    }
    for (int k = 0; k < FOLDER_SYMLINKS && folders > 1; k++) {
      Files.createSymbolicLink(
          tree.resolve(folder(k)).resolve("sibling" + k), Path.of("..", folder(k + 1)));
    }
    for (int k = 0; k < HARD_LINKS && count > 1; k++) {
      int i = (k * (count / HARD_LINKS) + count / 2) % count;
      int d = (i + 1) % folders;
      Files.createLink(
          tree.resolve(folder(d)).resolve("hard" + k + ".bin"), tree.resolve(file(i, folders)));
    }
    cmd.check(
        List.of(
            "tar",
            "--sort=name",
            "--mtime=@" + EPOCH,
            "--owner=0",
            "--group=0",
            "--numeric-owner",
            "-cf",
            archive.toString(),
            "-C",
            tree.toString(),
            "."),
        null,
        LIMIT);
  }

  private static String folder(int d) {
    return String.format("d%03d", d);
  }

  private static String file(int i, int folders) {
    return folder(i % folders) + String.format("/f%05d.bin", i);
  }

  /**
   * Creates a git repository at {@code repo} with {@code count} text files of 1-6 KiB in three
   * levels of folders, committed in {@link #COMMITS} commits, and packs its objects as a repository
   * that has been fetched or gc'ed holds them. Returns the commit id of HEAD.
   */
  static String gitRepository(Path repo, int count, Command cmd) throws Exception {
    Files.createDirectories(repo);
    cmd.check(
        List.of("git", "-c", "init.defaultBranch=main", "init", "-q", repo.toString()),
        null,
        LIMIT);
    Random random = new Random(31);
    List<Path> files = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Path f =
          repo.resolve(
              String.format("src/a%d/b%d/c%d/file%05d.txt", i % 4, (i / 4) % 5, (i / 20) % 10, i));
      files.add(f);
    }
    int firstPart = count * 2 / 3;
    writeText(files.subList(0, firstPart), random, false);
    commit(repo, cmd, "Add the first " + firstPart + " files");
    writeText(files.subList(firstPart, count), random, false);
    commit(repo, cmd, "Add " + (count - firstPart) + " more files");
    List<Path> changed = new ArrayList<>();
    for (int i = 0; i < count; i += 10) {
      changed.add(files.get(i));
    }
    writeText(changed, random, true);
    commit(repo, cmd, "Change " + changed.size() + " files");
    cmd.check(List.of("git", "-C", repo.toString(), "repack", "-a", "-d", "-q"), null, LIMIT);
    return cmd.check(List.of("git", "-C", repo.toString(), "rev-parse", "HEAD"), null, LIMIT)
        .trim();
  }

  /** Writes 1-6 KiB of lines of words into each file, or appends 5-20 lines. */
  private static void writeText(List<Path> files, Random random, boolean append)
      throws IOException {
    StringBuilder text = new StringBuilder();
    for (Path f : files) {
      Files.createDirectories(f.getParent());
      text.setLength(0);
      int target = append ? 0 : 1024 + random.nextInt(5 * 1024);
      int lines = append ? 5 + random.nextInt(16) : Integer.MAX_VALUE;
      for (int l = 0; l < lines && (append || text.length() < target); l++) {
        int words = 3 + random.nextInt(10);
        for (int w = 0; w < words; w++) {
          text.append(w == 0 ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
        }
        text.append('\n');
      }
      try (Writer out =
          append
              ? Files.newBufferedWriter(f, StandardCharsets.UTF_8, StandardOpenOption.APPEND)
              : Files.newBufferedWriter(f, StandardCharsets.UTF_8)) {
        out.write(text.toString());
      }
    }
  }

  private static void commit(Path repo, Command cmd, String message) throws Exception {
    cmd.check(List.of("git", "-C", repo.toString(), "add", "-A"), null, LIMIT);
    cmd.check(
        List.of(
            "git",
            "-C",
            repo.toString(),
            "-c",
            "user.name=Strata Bench",
            "-c",
            "user.email=bench@strata.invalid",
            "commit",
            "-q",
            "-m",
            message),
        null,
        LIMIT);
  }
}
