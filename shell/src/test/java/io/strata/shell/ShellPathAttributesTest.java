package io.strata.shell;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.conf.StrataConfig;
import io.strata.master.MasterServer;
import io.strata.master.journal.HeaderFile;
import io.strata.master.journal.Snapshots;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.shell.ShellRun.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attributes a path passes on or acts by, on a real master: {@code fs setTtl}, {@code fs
 * unsetTtl} and the TTL line of {@code fs stat}; {@code fs setWriteType}, {@code fs unsetWriteType}
 * and the write type line of {@code fs stat}.
 */
class ShellPathAttributesTest {
  private static final String NL = System.lineSeparator();

  @TempDir Path dir;
  private MasterServer master;
  private Path ufs;
  private final Map<String, String> conf = new HashMap<>();

  /** Starts a master over the test's folders, with these settings on top. */
  private void start(Map<String, String> extra) throws Exception {
    ufs = dir.resolve("ufs");
    Files.createDirectories(ufs);
    Map<String, String> m = new HashMap<>();
    m.put("strata.home", dir.resolve("master").toString());
    m.put("strata.master.rpc.port", "0");
    m.put("strata.master.web.port", "0");
    m.put("strata.master.root.ufs", "file://" + ufs);
    m.put("strata.master.rpc.threads", "4");
    m.putAll(extra);
    master = new MasterServer(StrataConfig.load(m));
    master.start();
    conf.put("strata.conf.dir", dir.resolve("conf").toString());
    conf.put("strata.master.hostname", "127.0.0.1");
    conf.put("strata.master.rpc.port", Integer.toString(master.rpcPort()));
    conf.put("strata.client.master.retry.max.duration", "5s");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (master != null) {
      master.close();
    }
  }

  private Result run(String... args) {
    return ShellRun.run(conf, args);
  }

  private void write(String relative, int bytes) throws Exception {
    Path p = ufs.resolve(relative);
    Files.createDirectories(p.getParent());
    Files.write(p, new byte[bytes]);
  }

  private static String ttlLine(Result stat) {
    return stat.out().lines().filter(l -> l.startsWith("TTL:")).findFirst().orElse(null);
  }

  @Test
  void setTtlShowsInStatAndUnsetTtlRemovesIt() throws Exception {
    start(Map.of());
    write("data/a.bin", 10);
    long modified = Files.getLastModifiedTime(ufs.resolve("data/a.bin")).toMillis();

    Result set = run("fs", "setTtl", "/data/a.bin", "90m");
    assertEquals(0, set.code(), set.err());
    String end = Format.time(modified + Duration.ofMinutes(90).toMillis());
    assertEquals("TTL of /data/a.bin: 1h30m, then free (at " + end + ")" + NL, set.out());
    assertEquals(
        "TTL:         1h30m, then free (at " + end + ")",
        ttlLine(run("fs", "stat", "/data/a.bin")));

    Result delete = run("fs", "setTtl", "--action", "delete", "/data", "2000");
    assertEquals(0, delete.code(), delete.err());
    assertTrue(delete.out().startsWith("TTL of /data: 2s, then delete (at "), delete.out());
    assertTrue(ttlLine(run("fs", "stat", "/data")).startsWith("TTL:         2s, then delete"));

    Result unset = run("fs", "unsetTtl", "/data/a.bin");
    assertEquals(0, unset.code(), unset.err());
    assertEquals("TTL of /data/a.bin: none" + NL, unset.out());
    Result stat = run("fs", "stat", "/data/a.bin");
    assertEquals(0, stat.code());
    assertEquals(null, ttlLine(stat), stat.out());
  }

  private static String writeTypeLine(Result stat) {
    return stat.out().lines().filter(l -> l.startsWith("Write type:")).findFirst().orElse(null);
  }

  @Test
  void aFolderWriteTypeIsPassedToWhatIsMadeInItAndBadTypesAreRefused() throws Exception {
    start(Map.of());
    write("prep/old/a.bin", 10);
    assertEquals(0, run("fs", "stat", "/prep/old/a.bin").code());

    Result set = run("fs", "setWriteType", "/prep", "through");
    assertEquals(0, set.code(), set.err());
    assertEquals("Write type of /prep: THROUGH" + NL, set.out());
    assertEquals("Write type:  THROUGH", writeTypeLine(run("fs", "stat", "/prep")));
    // Made from now on: folders take it and pass it down; what was there keeps its own.
    assertEquals(0, run("fs", "mkdir", "-p", "/prep/new/deeper").code());
    assertEquals("Write type:  THROUGH", writeTypeLine(run("fs", "stat", "/prep/new")));
    assertEquals("Write type:  THROUGH", writeTypeLine(run("fs", "stat", "/prep/new/deeper")));
    assertNull(writeTypeLine(run("fs", "stat", "/prep/old")));
    // A folder below may set another.
    assertEquals(0, run("fs", "setWriteType", "/prep/new", "CACHE_THROUGH").code());
    assertEquals(0, run("fs", "mkdir", "/prep/new/other").code());
    assertEquals("Write type:  CACHE_THROUGH", writeTypeLine(run("fs", "stat", "/prep/new/other")));

    Result unset = run("fs", "unsetWriteType", "/prep");
    assertEquals(0, unset.code(), unset.err());
    assertNull(writeTypeLine(run("fs", "stat", "/prep")));
    assertEquals(0, run("fs", "mkdir", "/prep/later").code());
    assertNull(writeTypeLine(run("fs", "stat", "/prep/later")));

    Result bad = run("fs", "setWriteType", "/prep", "sometimes");
    assertEquals(1, bad.code());
    assertTrue(
        bad.err()
            .contains(
                "strata.write.type of /prep is 'SOMETIMES': give"
                    + " CACHE_THROUGH, THROUGH, ASYNC_THROUGH or MUST_CACHE"),
        bad.err());
    assertNull(writeTypeLine(run("fs", "stat", "/prep")));
    assertEquals(0, run("fs", "setWriteType", "/prep", "must_cache").code());
    assertEquals("Write type:  MUST_CACHE", writeTypeLine(run("fs", "stat", "/prep")));
  }

  @Test
  void badArgumentsAreUsageErrorsAndMissingPathsFail() throws Exception {
    start(Map.of());
    Result badDuration = run("fs", "setTtl", "/x", "soon");
    assertEquals(2, badDuration.code());
    assertTrue(badDuration.err().contains("'soon' is not a time to live"), badDuration.err());
    assertEquals(2, run("fs", "setTtl", "/x", "0").code());
    Result badAction = run("fs", "setTtl", "--action", "archive", "/x", "1h");
    assertEquals(2, badAction.code());
    assertTrue(badAction.err().contains("give free or delete"), badAction.err());
    Result missing = run("fs", "setTtl", "/nope", "1h");
    assertEquals(1, missing.code());
    assertEquals("strata: Path does not exist: /nope" + NL, missing.err());
  }

  @Test
  void aPassedDeleteTtlDeletesThePath() throws Exception {
    start(Map.of("strata.master.ttl.check.interval", "100ms"));
    write("tmp/scratch/part-0", 5);
    write("keep.bin", 5);
    assertEquals(0, run("fs", "setTtl", "--action", "DELETE", "/tmp/scratch", "1ms").code());
    Result stat =
        await("/tmp/scratch to be deleted")
            .atMost(Duration.ofSeconds(30))
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(50))
            .until(() -> run("fs", "stat", "/tmp/scratch"), r -> r.code() != 0);
    assertEquals("strata: Path does not exist: /tmp/scratch" + NL, stat.err());
    assertFalse(Files.exists(ufs.resolve("tmp/scratch")));
    assertEquals(0, run("fs", "stat", "/keep.bin").code());
  }

  /**
   * A cluster upgraded from 0.1.0 and not finalized (restored here from a backup such a cluster
   * wrote: a root inode and no layout record) refuses a time to live: the command prints the
   * master's message, which says what to do, and exits with 1.
   */
  @Test
  void aClusterNotFinalizedRefusesSetTtl() throws Exception {
    Path backup = dir.resolve("backup-0.1.0");
    try (InodeStore old =
        InodeStore.open(dir.resolve("old-metastore"), 100, new SimpleMeterRegistry())) {
      old.apply(
          JournalEntry.newBuilder()
              .setSequence(1)
              .setInode(
                  InodeEntry.newBuilder()
                      .setId(InodeStore.ROOT_ID)
                      .setDirectory(true)
                      .setMode(0755))
              .build());
      Snapshots.write(old, backup, HeaderFile.BACKUP_KIND, 1, 1);
    }
    start(Map.of("strata.master.restore.backup", backup.toString()));
    write("f.bin", 3);
    Result r = run("fs", "setTtl", "/f.bin", "1h");
    assertEquals(1, r.code());
    assertEquals("", r.out());
    assertTrue(r.err().startsWith("strata: This cluster's metadata layout is 1"), r.err());
    assertTrue(r.err().contains("run `strata fsadmin upgrade finalize`"), r.err());
    assertEquals(1, run("fs", "unsetTtl", "/f.bin").code());
  }
}
