package io.strata.tests;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * A build of Strata that processes can be started from: this JVM's own classes ({@link #current()})
 * or a built copy of the previous release ({@link #previous()}, named in {@code
 * tests/compat/PREVIOUS_RELEASE}), so that end-to-end tests can run both side by side and upgrade
 * one process at a time.
 *
 * <p>A release gives the classpath of each {@link Role} and says which configuration keys its
 * processes accept. A process refuses an unknown {@code strata.*} key at start-up, so a process of
 * an older release must not be handed keys added since: {@link #knows(String)} tells them apart. A
 * built copy accepts the keys listed in its {@code docs/configuration.md}, which that copy's own
 * unit tests keep equal to its key classes; the current build accepts every key (its processes
 * check them as usual).
 *
 * <p>The previous release is built once per machine (see {@link ReleaseCache}): later calls, in
 * this JVM or in later ones, reuse the built copy.
 */
public final class Release {
  /** The repository file naming the previous release: a tag and a full commit. */
  static final String PREVIOUS_RELEASE_FILE = "tests/compat/PREVIOUS_RELEASE";

  private static final Pattern KEY_ROW = Pattern.compile("^\\| `(strata\\.[^`]+)` \\|");

  /** The processes a release can start, each from its module's jar and dependencies. */
  public enum Role {
    MASTER("core/server/master", "io.strata.master.MasterMain"),
    WORKER("core/server/worker", "io.strata.worker.WorkerMain"),
    PROXY("core/server/proxy", "io.strata.proxy.ProxyMain"),
    FUSE("integration/fuse", "io.strata.fuse.FuseMain"),
    SHELL("shell", "io.strata.shell.StrataShell");

    private final String module;
    private final String mainClass;

    Role(String module, String mainClass) {
      this.module = module;
      this.mainClass = mainClass;
    }

    /** The module folder, relative to the repository's top. */
    public String module() {
      return module;
    }

    public String mainClass() {
      return mainClass;
    }
  }

  private static Release current;
  private static Release previous;
  private static RuntimeException previousFailure;

  private final String version;

  /** Null for the current build, which may hold changes no commit has. */
  private final String commit;

  /** The built copy's folder; null for the current build. */
  private final Path dir;

  /** The current build's classpath; null for a built copy. */
  private final String jvmClasspath;

  /** The keys a built copy accepts; null for the current build, which accepts all. */
  private final Set<String> keys;

  private Release(String version, String commit, Path dir, String jvmClasspath, Set<String> keys) {
    this.version = version;
    this.commit = commit;
    this.dir = dir;
    this.jvmClasspath = jvmClasspath;
    this.keys = keys;
  }

  /**
   * This JVM's build: every role runs on this JVM's classpath (under Surefire, its test classpath),
   * less the in-process test servers (see {@link MultiProcessCluster#serverClasspath}).
   */
  public static synchronized Release current() {
    if (current == null) {
      String testCp = System.getProperty("surefire.test.class.path");
      String classpath =
          MultiProcessCluster.serverClasspath(
              testCp != null && !testCp.isEmpty() ? testCp : System.getProperty("java.class.path"));
      current = new Release(currentVersion(), null, null, classpath, null);
    }
    return current;
  }

  /** The version in the repository's top pom.xml, or "unknown" outside a checkout. */
  private static String currentVersion() {
    try {
      return pomVersion(ReleaseCache.repositoryRoot(Path.of("")).resolve("pom.xml"));
    } catch (IllegalStateException e) {
      return "unknown";
    }
  }

  /**
   * The previous release, built the first time on this machine (a few minutes; see {@link
   * ReleaseCache}) and reused afterwards.
   *
   * @throws IllegalStateException when it cannot be built; the message names the build log
   */
  public static synchronized Release previous() {
    if (previous != null) {
      return previous;
    }
    // A failed build is not tried again by every test of the same JVM.
    if (previousFailure != null) {
      throw new IllegalStateException(previousFailure.getMessage(), previousFailure);
    }
    Path repository = ReleaseCache.repositoryRoot(Path.of(""));
    try {
      String commit = tagged(repository.resolve(PREVIOUS_RELEASE_FILE)).commit();
      Path dir = new ReleaseCache(repository, ReleaseCache.defaultRoot()).build(commit);
      previous = builtAt(dir, commit);
      return previous;
    } catch (IOException e) {
      previousFailure =
          new IllegalStateException(
              "Cannot build the previous release of " + repository + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while building the previous release", e);
    } catch (RuntimeException e) {
      previousFailure = e;
    }
    throw previousFailure;
  }

  /** A release as tests/compat/PREVIOUS_RELEASE names it: its tag and full commit. */
  record Tagged(String tag, String commit) {}

  /**
   * The release named by a PREVIOUS_RELEASE file: its first line that is neither blank nor a {@code
   * #} comment holds the tag and the full commit.
   */
  static Tagged tagged(Path file) throws IOException {
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      String t = line.trim();
      if (t.isEmpty() || t.startsWith("#")) {
        continue;
      }
      String[] fields = t.split("\\s+");
      if (fields.length != 2 || !fields[1].matches("[0-9a-f]{40}")) {
        throw new IllegalStateException(file + ": expected '<tag> <full commit>', not '" + t + "'");
      }
      return new Tagged(fields[0], fields[1]);
    }
    throw new IllegalStateException(file + " names no release ('<tag> <full commit>')");
  }

  /** The built copy of {@code commit} in {@code dir} (its modules packaged). */
  static Release builtAt(Path dir, String commit) throws IOException {
    return new Release(
        pomVersion(dir.resolve("pom.xml")),
        commit,
        dir,
        null,
        documentedKeys(dir.resolve("docs/configuration.md")));
  }

  /** The keys in the tables of a docs/configuration.md (its rows begin with the key's name). */
  static Set<String> documentedKeys(Path doc) throws IOException {
    Set<String> out = new TreeSet<>();
    for (String line : Files.readAllLines(doc, StandardCharsets.UTF_8)) {
      Matcher m = KEY_ROW.matcher(line);
      if (m.find()) {
        out.add(m.group(1));
      }
    }
    if (out.isEmpty()) {
      throw new IllegalStateException(doc + " lists no configuration keys");
    }
    return Collections.unmodifiableSet(out);
  }

  /** The project version of a Maven pom (its own {@code <version>}, else its parent's). */
  private static String pomVersion(Path pom) {
    try {
      Element project =
          DocumentBuilderFactory.newInstance()
              .newDocumentBuilder()
              .parse(pom.toFile())
              .getDocumentElement();
      String own = childText(project, "version");
      if (own != null) {
        return own;
      }
      for (Node n = project.getFirstChild(); n != null; n = n.getNextSibling()) {
        if (n instanceof Element e && e.getTagName().equals("parent")) {
          String parent = childText(e, "version");
          if (parent != null) {
            return parent;
          }
        }
      }
      throw new IllegalStateException(pom + " has no version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (org.xml.sax.SAXException | javax.xml.parsers.ParserConfigurationException e) {
      throw new IllegalStateException("Cannot read " + pom + ": " + e.getMessage(), e);
    }
  }

  private static String childText(Element parent, String tag) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(tag)) {
        return e.getTextContent().trim();
      }
    }
    return null;
  }

  /** The Maven version of this release, such as {@code 0.1.0-SNAPSHOT}. */
  public String release() {
    return version;
  }

  /** The commit a built copy was made from; empty for the current build. */
  public Optional<String> commit() {
    return Optional.ofNullable(commit);
  }

  public boolean isCurrent() {
    return dir == null;
  }

  /**
   * The classpath that starts {@code role}: for a built copy {@code
   * <dir>/<module>/target/strata-<...>.jar:<dir>/<module>/target/lib/*}, as bin/strata runs it; for
   * the current build, this JVM's classpath for every role.
   *
   * @throws IllegalStateException when the copy's module has no jar or no lib folder
   */
  public String classpath(Role role) {
    if (isCurrent()) {
      return jvmClasspath;
    }
    Path target = dir.resolve(role.module()).resolve("target");
    Path lib = target.resolve("lib");
    Optional<Path> jar = Optional.empty();
    if (Files.isDirectory(target)) {
      try (Stream<Path> files = Files.list(target)) {
        jar =
            files
                .filter(
                    f -> {
                      String n = f.getFileName().toString();
                      return n.startsWith("strata-")
                          && n.endsWith(".jar")
                          && !n.endsWith("-sources.jar")
                          && !n.endsWith("-tests.jar");
                    })
                .sorted()
                .findFirst();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (jar.isEmpty() || !Files.isDirectory(lib)) {
      throw new IllegalStateException(
          role.module()
              + " of "
              + this
              + " is not built: "
              + target
              + " needs its strata-*.jar and lib/ (mvn package in "
              + dir
              + ")");
    }
    return jar.get() + File.pathSeparator + lib + File.separator + "*";
  }

  /** Whether a process of this release accepts the configuration key {@code name}. */
  public boolean knows(String name) {
    return keys == null || !name.startsWith("strata.") || keys.contains(name);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Release r
        && Objects.equals(dir, r.dir)
        && Objects.equals(commit, r.commit)
        && Objects.equals(jvmClasspath, r.jvmClasspath);
  }

  @Override
  public int hashCode() {
    return Objects.hash(dir, commit);
  }

  @Override
  public String toString() {
    return isCurrent()
        ? "Strata " + version + " (this build)"
        : "Strata " + version + " (" + commit.substring(0, 12) + ", built in " + dir + ")";
  }
}
