package io.strata.tests;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Built copies of commits of this repository, one folder per commit under {@code
 * ${STRATA_RELEASE_CACHE:-$HOME/.cache/strata/releases}}, shared by every JVM of the machine. A
 * copy is a detached git worktree made from the repository's own history (nothing is downloaded)
 * and built with {@code mvn -o package -DskipTests} in its own folder: it never installs into the
 * local Maven repository, so it cannot change what this build resolves.
 *
 * <p>A copy counts as built only once its stamp file exists; a folder without one (a build that
 * failed or was interrupted) is removed and made again. A lock file beside the folder keeps two
 * JVMs from building the same commit at once; the second waits and then finds the stamp.
 */
final class ReleaseCache {
  static final String CACHE_VARIABLE = "STRATA_RELEASE_CACHE";

  /** Written into a copy's folder once its build succeeded. */
  static final String STAMP = "strata-release.built";

  /** The build's output, in the copy's folder. */
  static final String BUILD_LOG = "strata-release-build.log";

  static final Duration BUILD_TIMEOUT = Duration.ofMinutes(20);
  private static final Duration GIT_TIMEOUT = Duration.ofMinutes(5);

  private final Path repository;
  private final Path root;

  /**
   * @param repository the checkout whose history holds the commits
   * @param root the folder holding one built copy per commit
   */
  ReleaseCache(Path repository, Path root) {
    this.repository = repository;
    this.root = root.toAbsolutePath().normalize();
  }

  /** {@code $STRATA_RELEASE_CACHE}, else {@code ~/.cache/strata/releases}. */
  static Path defaultRoot() {
    String given = System.getenv(CACHE_VARIABLE);
    if (given != null && !given.isBlank()) {
      return Path.of(given);
    }
    return Path.of(System.getProperty("user.home"), ".cache", "strata", "releases");
  }

  /**
   * The repository's top folder: the nearest folder at or above {@code from} that holds both {@code
   * .git} (a folder, or a file in a worktree) and {@code tests/compat}.
   */
  static Path repositoryRoot(Path from) {
    for (Path p = from.toAbsolutePath().normalize(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve(".git")) && Files.isDirectory(p.resolve("tests/compat"))) {
        return p;
      }
    }
    throw new IllegalStateException(
        "No Strata repository (a folder with .git and tests/compat)"
            + " at or above "
            + from.toAbsolutePath()
            + ": run from inside a checkout of Strata");
  }

  /** The folder of {@code commit}'s copy, built or not. */
  Path folder(String commit) {
    return root.resolve(commit);
  }

  /**
   * The folder of {@code commit}'s built copy, building it first when no stamp says it was.
   *
   * @throws IOException when the checkout or the build fails; the message names the build log
   */
  Path build(String commit) throws IOException, InterruptedException {
    Path dir = folder(commit);
    if (Files.exists(dir.resolve(STAMP))) {
      return dir;
    }
    Files.createDirectories(root);
    try (FileChannel channel =
            FileChannel.open(
                root.resolve(commit + ".lock"),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        FileLock lock = channel.lock()) {
      // Another JVM may have built it while this one waited for the lock.
      if (Files.exists(dir.resolve(STAMP))) {
        return dir;
      }
      checkout(commit, dir);
      try {
        runBuild(dir, true);
      } catch (IOException e) {
        // A release may use an artifact this build does not, which a fresh machine's local
        // repository lacks: fetch it once rather than fail (later builds find it offline).
        if (!Files.readString(dir.resolve(BUILD_LOG)).contains("in offline mode")) {
          throw e;
        }
        runBuild(dir, false);
      }
      Files.writeString(
          dir.resolve(STAMP), commit + " built " + Instant.now() + "\n", StandardCharsets.UTF_8);
      return dir;
    }
  }

  /** A fresh detached worktree of {@code commit} at {@code dir}, replacing what was there. */
  private void checkout(String commit, Path dir) throws IOException, InterruptedException {
    if (Files.exists(dir)) {
      MultiProcessCluster.deleteTree(dir);
    }
    if (registered(dir)) {
      // The entry of a copy whose folder was removed: git refuses the path until it is pruned.
      git("worktree", "prune");
    }
    git("worktree", "add", "--detach", "--force", dir.toString(), commit);
  }

  /** Whether the repository lists a worktree at {@code dir}. */
  private boolean registered(Path dir) throws IOException, InterruptedException {
    Path real = root.toRealPath().resolve(dir.getFileName());
    for (String line : git("worktree", "list", "--porcelain").split("\n")) {
      if (line.startsWith("worktree ")
          && (Path.of(line.substring(9)).equals(dir) || Path.of(line.substring(9)).equals(real))) {
        return true;
      }
    }
    return false;
  }

  private String git(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("git", "-C", repository.toString()));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(root, "git", ".out");
    try {
      Process p =
          new ProcessBuilder(cmd)
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
      if (!p.waitFor(GIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        stop(p);
        throw new IOException(String.join(" ", cmd) + " did not finish within " + GIT_TIMEOUT);
      }
      String text = Files.readString(out, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new IOException(
            String.join(" ", cmd) + " failed (exit " + p.exitValue() + "): " + text.trim());
      }
      return text;
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /**
   * {@code mvn -q -B package -DskipTests} in {@code dir}, offline or not, its output added to the
   * build log.
   */
  private void runBuild(Path dir, boolean offline) throws IOException, InterruptedException {
    Path log = dir.resolve(BUILD_LOG);
    List<String> cmd = buildCommand();
    if (!offline) {
      cmd.remove("-o");
    }
    Files.writeString(
        log,
        "# " + Instant.now() + " in " + dir + ": " + String.join(" ", cmd) + "\n",
        StandardCharsets.UTF_8,
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND);
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    // Set by the mvn script that started this JVM; they describe that build, not this one.
    Map<String, String> env = pb.environment();
    env.remove("MAVEN_PROJECTBASEDIR");
    env.remove("MAVEN_CMD_LINE_ARGS");
    Process p = pb.start();
    boolean done;
    try {
      done = p.waitFor(BUILD_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      stop(p);
      throw e;
    }
    if (!done) {
      stop(p);
      throw new IOException(
          "Building "
              + dir
              + " did not finish within "
              + BUILD_TIMEOUT.toMinutes()
              + " min; see "
              + log);
    }
    if (p.exitValue() != 0) {
      throw new IOException(
          "Building " + dir + " failed (mvn exit " + p.exitValue() + "); see " + log);
    }
  }

  /**
   * The build command: the {@code mvn} on PATH, offline, packaging only. The local repository is
   * named only when this JVM was given one other than Maven's default, so both builds resolve the
   * same artifacts.
   */
  static List<String> buildCommand() {
    List<String> cmd = new ArrayList<>(List.of("mvn", "-o", "-q", "-B", "package", "-DskipTests"));
    String local = System.getProperty("maven.repo.local");
    Path standard = Path.of(System.getProperty("user.home"), ".m2", "repository");
    if (local != null
        && !local.isBlank()
        && !Path.of(local).toAbsolutePath().normalize().equals(standard)) {
      cmd.add("-Dmaven.repo.local=" + Path.of(local).toAbsolutePath().normalize());
    }
    return cmd;
  }

  private static void stop(Process p) throws InterruptedException {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
    p.waitFor(30, TimeUnit.SECONDS);
  }
}
