package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.ConfigKey;
import io.strata.common.conf.ConfigRegistry;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a {@link Release} is made of, without building one: the keys it reads from a copy's docs,
 * the classpaths of a built copy's modules, the configuration its processes are handed, the
 * PREVIOUS_RELEASE file and the cache's stamp.
 */
class ReleaseTest {
  static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";
  @TempDir Path dir;

  static Path repository() {
    return ReleaseCache.repositoryRoot(Path.of(""));
  }

  /** A copy as `mvn package` leaves it, with a docs table of two keys. */
  private Path builtCopy() throws Exception {
    Path copy = Files.createDirectories(dir.resolve("copy"));
    Files.writeString(
        copy.resolve("pom.xml"),
        "<project><modelVersion>4.0.0</modelVersion>"
            + "<groupId>io.strata</groupId><artifactId>strata-parent</artifactId>"
            + "<version>0.0.9-SNAPSHOT</version></project>");
    Files.createDirectories(copy.resolve("docs"));
    Files.writeString(
        copy.resolve("docs/configuration.md"),
        "# Configuration keys\n\n"
            + "| key | type | default | description |\n| --- | --- | --- | --- |\n"
            + "| `strata.home` | string | `~/.strata` | Home. |\n"
            + "| `strata.worker.rpc.port` | int (port) | `29999` | Port. |\n");
    for (Release.Role role : Release.Role.values()) {
      Path target = copy.resolve(role.module()).resolve("target");
      Files.createDirectories(target.resolve("lib"));
      Files.write(target.resolve("strata-x-0.0.9-SNAPSHOT-sources.jar"), new byte[0]);
      Files.write(target.resolve("strata-x-0.0.9-SNAPSHOT.jar"), new byte[0]);
    }
    return copy;
  }

  @Test
  void theKeysReadFromThisCheckoutsDocsAreTheKeysItDeclares() throws Exception {
    Set<String> declared = new TreeSet<>();
    for (ConfigKey k : ConfigRegistry.all()) {
      declared.add(k.name());
    }
    assertEquals(declared, Release.documentedKeys(repository().resolve("docs/configuration.md")));
  }

  @Test
  void aBuiltCopyIsNotHandedKeysItDoesNotKnow() throws Exception {
    Release old = Release.builtAt(builtCopy(), COMMIT);
    Map<String, String> props = new LinkedHashMap<>();
    props.put("logback.configurationFile", "strata-logback-file.xml");
    props.put("strata.worker.rpc.port", "4000");
    props.put("strata.worker.added.later", "1");

    ClusterLauncher.Command c =
        ClusterLauncher.command(old, Release.Role.WORKER, props, List.of("-Xmx64m"), List.of());
    assertEquals(List.of("strata.worker.added.later"), c.dropped());
    assertTrue(c.command().contains("-Dstrata.worker.rpc.port=4000"), c.command().toString());
    assertTrue(c.command().contains("-Dlogback.configurationFile=strata-logback-file.xml"));
    assertFalse(c.command().stream().anyMatch(a -> a.contains("added.later")));
    assertEquals("io.strata.worker.WorkerMain", c.command().get(c.command().size() - 1));

    ClusterLauncher.Command now =
        ClusterLauncher.command(
            Release.current(), Release.Role.WORKER, props, List.of(), List.of());
    assertEquals(List.of(), now.dropped(), "this build checks its own keys when it starts");
  }

  @Test
  void theKeysLeftOutAreNamedInTheProcessOutFile() throws Exception {
    Release old = Release.builtAt(builtCopy(), COMMIT);
    Path logs = Files.createDirectories(dir.resolve("logs"));
    // The copy's jars are empty: the JVM starts and ends at once, after the note is written.
    Process p =
        new ClusterLauncher(logs)
            .launch(
                "worker0",
                old,
                Release.Role.WORKER,
                Map.of("strata.worker.rpc.port", "4000", "strata.worker.added.later", "1"),
                List.of("-Xmx32m"),
                List.of());
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    String out = Files.readString(logs.resolve("worker0.out"));
    assertTrue(out.contains("which does not know them: strata.worker.added.later\n"), out);
    assertFalse(out.contains("rpc.port"), out);
  }

  @Test
  void aBuiltCopyRunsEachRoleFromItsModulesJarAndLibFolder() throws Exception {
    Path copy = builtCopy();
    Release old = Release.builtAt(copy, COMMIT);
    assertEquals("0.0.9-SNAPSHOT", old.release());
    assertEquals(COMMIT, old.commit().orElseThrow());
    assertFalse(old.isCurrent());
    Path fuse = copy.resolve("integration/fuse/target");
    assertEquals(
        fuse.resolve("strata-x-0.0.9-SNAPSHOT.jar")
            + File.pathSeparator
            + fuse.resolve("lib")
            + File.separator
            + "*",
        old.classpath(Release.Role.FUSE));
    assertTrue(Release.current().isCurrent());
    assertTrue(Release.current().commit().isEmpty());
  }

  @Test
  void thePreviousReleaseFileNamesACommitOfThisRepositoryAndItsTag() throws Exception {
    Release.Tagged tagged = Release.tagged(repository().resolve(Release.PREVIOUS_RELEASE_FILE));
    assertEquals(
        tagged.commit(),
        git("rev-parse", "--verify", "-q", tagged.commit() + "^{commit}"),
        "the commit is not in this repository's history");
    // A checkout made without tags still has the commit; where the tag is known, it names it.
    String tag = git("rev-parse", "--verify", "-q", tagged.tag() + "^{commit}");
    if (!tag.isEmpty()) {
      assertEquals(tagged.commit(), tag, "the tag " + tagged.tag() + " names another commit");
    }
  }

  private static String git(String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("git", "-C", repository().toString()));
    cmd.addAll(List.of(args));
    Process git = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    assertTrue(git.waitFor(60, TimeUnit.SECONDS));
    return new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
  }

  @Test
  void aStampedCopyIsReusedWithoutBuilding() throws Exception {
    Path cache = dir.resolve("cache");
    Path copy = Files.createDirectories(cache.resolve(COMMIT));
    Files.writeString(copy.resolve(ReleaseCache.STAMP), "built\n");
    // The repository does not hold COMMIT: any checkout or build would fail.
    assertEquals(copy, new ReleaseCache(repository(), cache).build(COMMIT));
    assertFalse(Files.exists(copy.resolve(ReleaseCache.BUILD_LOG)));
  }

  @Test
  void theBuildPackagesOfflineAndNeverInstalls() {
    List<String> cmd = ReleaseCache.buildCommand();
    assertEquals(List.of("mvn", "-o", "-q", "-B", "package", "-DskipTests"), cmd.subList(0, 6));
    assertFalse(cmd.contains("install"));
  }
}
