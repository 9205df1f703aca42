package io.strata.master.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.Version;
import io.strata.common.conf.StrataConfig;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.LoadJobState;
import io.strata.proto.journal.JournalHeader;
import io.strata.proto.journal.LoadJobEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The current build reads what release 0.1.0 (metadata layout 1) wrote: the golden journal folder
 * and backup of {@code tests/compat/layout-1} (README.md there says how they were made), copied to
 * a temporary folder, open as a one-master journal into an empty metastore and give back the
 * namespace that release listed. Reading them leaves the cluster at layout 1.
 */
class GoldenLayoutOneTest {
  /** The golden files, from this module's folder (where Maven runs its tests). */
  private static final Path GOLDEN = Path.of("../../../tests/compat/layout-1");

  @TempDir Path tmp;
  private Path journalDir;
  private Path backupDir;

  @BeforeEach
  void copyTheGoldenFiles() throws IOException {
    assertTrue(
        Files.isDirectory(GOLDEN.resolve("journal")),
        "the golden files are missing: " + GOLDEN.toAbsolutePath().normalize());
    journalDir = tmp.resolve("journal");
    backupDir = tmp.resolve("backup");
    copyTree(GOLDEN.resolve("journal"), journalDir);
    copyTree(GOLDEN.resolve("backup"), backupDir);
  }

  @Test
  void journalReplaysFromItsSnapshotToTheNamespaceReleaseZeroOneListed() throws Exception {
    Snapshots.Found snapshot = goldenSnapshot();
    try (JournalSystem journal = open(Map.of())) {
      InodeStore store = journal.store();
      assertEquals(expected("expected-namespace.txt"), NamespaceListing.entries(store));
      assertEquals(expected("expected-xattrs.txt"), NamespaceListing.xattrs(store));
      assertEquals(expected("expected-mounts.txt"), NamespaceListing.mountPoints(store));
      assertEquals(
          expected("expected-namespace.txt").size() + 1,
          store.inodeCount(),
          "inodes counted with the root");
      // Started from the snapshot, and the log past it was applied on top.
      assertEquals(snapshot.sequence(), journal.lastCheckpointSequence());
      assertTrue(
          store.appliedSequence() > snapshot.sequence(),
          "applied sequence "
              + store.appliedSequence()
              + " after snapshot sequence "
              + snapshot.sequence());
      // The load job of `strata fs load /data/train`, recorded before the snapshot.
      List<LoadJobEntry> jobs = store.loadJobs();
      assertEquals(1, jobs.size(), jobs::toString);
      assertEquals("/data/train", jobs.get(0).getPath());
      assertEquals(LoadJobState.LOAD_SUCCEEDED, jobs.get(0).getState());
      // Reading an old cluster's journal does not finalize it.
      assertEquals(Version.FIRST_LAYOUT_VERSION, store.layoutVersion());
      journal.close(false);
    }
  }

  @Test
  void aSnapshotOfTheReplayedJournalIsStillLayoutOneAndReadsBack() throws Exception {
    List<String> namespace;
    long sequence;
    try (JournalSystem journal = open(Map.of())) {
      namespace = NamespaceListing.entries(journal.store());
      sequence = journal.checkpoint();
      assertEquals(journal.store().appliedSequence(), sequence);
      journal.close(false);
    }
    Snapshots.Found newest =
        new Snapshots(JournalSystem.groupDir(journalDir).resolve("sm")).newest().orElseThrow();
    assertEquals(sequence, newest.sequence());
    assertEquals(
        Version.FIRST_LAYOUT_VERSION,
        newest.header().getFormatVersion(),
        "release 0.1.0 must still read what this release writes before finalize");
    try (JournalSystem again = open(Map.of())) {
      assertEquals(namespace, NamespaceListing.entries(again.store()));
      assertEquals(sequence, again.store().appliedSequence());
      assertEquals(Version.FIRST_LAYOUT_VERSION, again.store().layoutVersion());
      again.close(false);
    }
  }

  @Test
  void snapshotHeaderIsLayoutOneAndItsDatabaseLoads() throws Exception {
    Snapshots.Found snapshot = goldenSnapshot();
    Path headerFile = snapshot.dir().resolve(HeaderFile.NAME);
    JournalHeader header = HeaderFile.read(headerFile);
    HeaderFile.check(header, headerFile);
    assertEquals(1, header.getFormatVersion());
    assertEquals(HeaderFile.SNAPSHOT_KIND, header.getKind());
    assertTrue(header.getRelease().startsWith("0.1.0"), header::toString);
    assertEquals(
        snapshot.dir().getFileName().toString(),
        header.getRaftTerm() + "_" + header.getRaftIndex());
    try (InodeStore store =
        InodeStore.open(tmp.resolve("metastore"), 1000, new SimpleMeterRegistry())) {
      store.replaceWith(snapshot.db());
      assertEquals(header.getFirstSequence(), store.appliedSequence());
      assertEquals(header.getInodeCount(), store.inodeCount());
      assertEquals(header.getInodeCount(), NamespaceListing.entries(store).size() + 1);
      assertEquals(Version.FIRST_LAYOUT_VERSION, store.layoutVersion());
      assertTrue(store.nextInodeId() > header.getInodeCount(), "ids of deleted inodes stay used");
    }
  }

  @Test
  void backupRestoresToTheNamespaceAtTheBackupAndNothingAfter() throws Exception {
    JournalHeader header = HeaderFile.read(backupDir.resolve(HeaderFile.NAME));
    assertEquals(1, header.getFormatVersion());
    assertEquals(HeaderFile.BACKUP_KIND, header.getKind());
    // The golden files are only a test when the log went on after the backup.
    assertNotEquals(expected("expected-backup-namespace.txt"), expected("expected-namespace.txt"));
    Path fresh = tmp.resolve("fresh-journal");
    try (JournalSystem journal =
        open(
            Map.of(
                "strata.master.journal.dir", fresh.toString(),
                "strata.master.restore.backup", backupDir.toString()))) {
      InodeStore store = journal.store();
      assertEquals(expected("expected-backup-namespace.txt"), NamespaceListing.entries(store));
      assertEquals(expected("expected-backup-xattrs.txt"), NamespaceListing.xattrs(store));
      assertEquals(expected("expected-backup-mounts.txt"), NamespaceListing.mountPoints(store));
      assertEquals(header.getFirstSequence(), store.appliedSequence());
      assertEquals(header.getInodeCount(), store.inodeCount());
      assertEquals(Version.FIRST_LAYOUT_VERSION, store.layoutVersion());
      journal.close(false);
    }
  }

  /** A one-master journal on the copied files, started (snapshot loaded, log replayed). */
  private JournalSystem open(Map<String, String> extra) throws IOException {
    Map<String, String> conf = new HashMap<>();
    conf.put("strata.home", tmp.resolve("home").toString());
    conf.put("strata.master.hostname", "127.0.0.1");
    conf.put("strata.master.rpc.port", "0");
    conf.put("strata.master.journal.dir", journalDir.toString());
    // Empty at every open: the journal rebuilds it from the snapshot and the log.
    conf.put("strata.master.metastore.dir", tmp.resolve("metastore").toString());
    conf.putAll(extra);
    JournalSystem journal = JournalSystem.open(StrataConfig.load(conf), new SimpleMeterRegistry());
    try {
      journal.start();
    } catch (IOException | RuntimeException e) {
      journal.close(false);
      throw e;
    }
    return journal;
  }

  private Snapshots.Found goldenSnapshot() throws IOException {
    List<Snapshots.Found> all =
        new Snapshots(JournalSystem.groupDir(journalDir).resolve("sm")).complete();
    assertEquals(1, all.size(), "the golden journal holds one snapshot: " + all);
    return all.get(0);
  }

  private static List<String> expected(String name) throws IOException {
    List<String> lines = new ArrayList<>();
    for (String line : Files.readAllLines(GOLDEN.resolve(name), StandardCharsets.UTF_8)) {
      if (!line.isEmpty()) {
        lines.add(line);
      }
    }
    return lines;
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
