package io.strata.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.strata.common.conf.StrataConfig;
import io.strata.master.MasterServer;
import io.strata.proto.BackupRequest;
import io.strata.proto.CheckpointRequest;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.JournalMasterGrpc;
import io.strata.proto.RenameRequest;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tools on the journal of a real master run in this JVM: files are created, renamed and deleted
 * through its gRPC API, a snapshot and a backup are taken, the master is closed, and the tools read
 * a copy of its journal folder.
 */
class MasterJournalTest {
  @TempDir static Path shared;
  @TempDir Path tmp;

  /** A copy of the journal folder taken while the master ran; tests damage copies of it. */
  private static Path pristine;

  /** The journal folder after the master closed (it takes a snapshot as it closes). */
  private static Path live;

  private static Path backup;
  private static Path ufs;
  private static final Set<String> created = new HashSet<>();

  /** This test's copy of {@link #pristine}. */
  private Path journal;

  @BeforeAll
  static void writeAJournal() throws Exception {
    Path home = shared.resolve("home");
    live = home.resolve("master").resolve("journal");
    Files.createDirectories(home.resolve("ufs"));
    MasterServer master = new MasterServer(StrataConfig.load(config(home)));
    master.start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", master.rpcPort()).usePlaintext().build();
    try {
      FileSystemMasterGrpc.FileSystemMasterBlockingStub fs =
          FileSystemMasterGrpc.newBlockingStub(channel);
      fs.createDirectory(CreateDirectoryRequest.newBuilder().setPath("/d").build());
      ufs = home.resolve("ufs");
      createFiles(fs, "before-", 20);
      fs.rename(
          RenameRequest.newBuilder().setSrcPath("/d/before-1").setDstPath("/d/renamed-1").build());
      created.add("renamed-1");
      fs.delete(DeleteRequest.newBuilder().setPath("/d/before-2").build());
      fs.checkpoint(CheckpointRequest.getDefaultInstance());
      // Enough entries after the snapshot to fill closed segments (segments are 16 KiB here).
      createFiles(fs, "after-", 150);
      backup =
          Path.of(
              JournalMasterGrpc.newBlockingStub(channel)
                  .backup(
                      BackupRequest.newBuilder()
                          .setDir(shared.resolve("backups").toString())
                          .build())
                  .getPath());
      // The tools, run as another process, refuse the live folder...
      ProcessResult refused = runInAnotherProcess("verify", live.toString());
      assertEquals(JournalToolsMain.IN_USE, refused.code(), refused::toString);
      assertTrue(
          refused
              .err()
              .contains("is in use by a running master (pid " + ProcessHandle.current().pid()),
          refused::toString);
      // ...and read a copy of it, taken while the master runs (idle: every write returned).
      pristine = shared.resolve("copy");
      copyTree(live, pristine);
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      master.close();
    }
  }

  @BeforeEach
  void copyTheJournal() throws IOException {
    journal = tmp.resolve("copy");
    copyTree(pristine, journal);
  }

  private static Map<String, String> config(Path home) {
    Map<String, String> c = new HashMap<>();
    c.put("strata.home", home.toString());
    c.put("strata.master.rpc.port", "0");
    c.put("strata.master.web.port", "0");
    c.put("strata.master.root.ufs", "file://" + home.resolve("ufs"));
    c.put("strata.master.rpc.threads", "4");
    c.put("strata.master.journal.segment.size", "16KB");
    return c;
  }

  private static void createFiles(
      FileSystemMasterGrpc.FileSystemMasterBlockingStub fs, String prefix, int n)
      throws IOException {
    for (int i = 0; i < n; i++) {
      String path = "/d/" + prefix + i;
      // A client writes the bytes to the under store itself; the master journals the inode.
      Files.createDirectories(ufs.resolve("d"));
      Files.write(ufs.resolve("d").resolve(prefix + i), new byte[0]);
      long id =
          fs.createFile(CreateFileRequest.newBuilder().setPath(path).build()).getFile().getFileId();
      fs.completeFile(
          CompleteFileRequest.newBuilder().setPath(path).setLength(0).setFileId(id).build());
      created.add(prefix + i);
    }
  }

  @Test
  void dumpListsTheEntriesTheMasterWrote() {
    Tool t = Tool.run("dump", journal.toString());
    assertEquals(0, t.code(), t::toString);
    for (String name : created) {
      assertTrue(
          t.out().contains("name: \"" + name + "\"")
              || t.out().contains("new_name: \"" + name + "\""),
          () -> name + "\n" + t);
    }
    assertTrue(t.out().contains("  RENAME  rename {"), t::toString);
    assertTrue(t.out().contains("  DELETE_INODE  delete_inode {"), t::toString);
  }

  @Test
  void jsonDumpRoundTripsEveryBatch() throws Exception {
    Tool t = Tool.run("dump", journal.toString(), "--json");
    assertEquals(0, t.code(), t::toString);
    Map<Long, JournalBatch> fromJson = new TreeMap<>();
    for (String line : t.out().split("\n")) {
      JsonObject o = JsonParser.parseString(line).getAsJsonObject();
      if (o.get("type").getAsString().equals("batch")) {
        JournalBatch.Builder b = JournalBatch.newBuilder();
        com.google.protobuf.util.JsonFormat.parser()
            .merge(o.getAsJsonObject("batch").toString(), b);
        fromJson.put(o.get("index").getAsLong(), b.build());
      }
    }
    Map<Long, JournalBatch> stored = new TreeMap<>();
    for (GroupLog group : JournalFolder.of(journal).groups()) {
      group.read(
          0,
          Long.MAX_VALUE,
          (segment, raft, offset) -> {
            LogEntry e = LogEntry.decode(segment, raft, offset);
            if (e.batch() != null) {
              stored.put(raft.getIndex(), e.batch());
            }
          });
    }
    assertFalse(stored.isEmpty());
    assertEquals(stored, fromJson);
    Set<String> names = new HashSet<>();
    for (JournalBatch b : fromJson.values()) {
      for (JournalEntry e : b.getEntriesList()) {
        names.add(e.hasRename() ? e.getRename().getNewName() : e.getInode().getName());
      }
    }
    // The log after the purge holds at least the files created after the snapshot.
    for (int i = 0; i < 150; i++) {
      assertTrue(names.contains("after-" + i), names::toString);
    }
  }

  @Test
  void verifyPassesOnACleanJournalAndItsBackup() {
    Tool t = Tool.run("verify", journal.toString(), backup.toString());
    assertEquals(0, t.code(), t::toString);
    assertTrue(t.out().contains("OK: no damage found"), t::toString);
    assertTrue(
        t.out().contains("snapshot ")
            && t.out().contains(": OK (format " + io.strata.common.Version.LAYOUT_VERSION),
        t::toString);
    assertTrue(t.out().contains("replay from snapshot "), t::toString);
    assertTrue(t.out().contains("backup " + backup.getFileName() + ": OK"), t::toString);
    // The copy holds entries after its newest snapshot (the one taken on request).
    assertTrue(
        t.out()
            .matches("(?s).*replay from snapshot 1_\\d+: [1-9]\\d* journal entries " + "applied.*"),
        t::toString);

    Tool closed = Tool.run("verify", live.toString());
    assertEquals(0, closed.code(), closed::toString);
    assertTrue(closed.out().contains("OK: no damage found"), closed::toString);
  }

  @Test
  void verifyNamesAClosedSegmentWithAFlippedByte() throws Exception {
    Path segment =
        JournalFixture.files(journal.resolve("raft"), "").stream()
            .filter(p -> p.getFileName().toString().matches("log_\\d+-\\d+"))
            .max(Comparator.comparing(p -> p.getFileName().toString()))
            .orElseThrow();
    JournalFixture.flipByte(segment, Files.size(segment) / 2);
    Tool t = Tool.run("verify", journal.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(t.out().contains("DAMAGED " + segment + " at offset "), t::toString);
  }

  @Test
  void verifyNamesADamagedSnapshotDatabaseAndHeader() throws Exception {
    Path header = JournalFixture.files(journal, "HEADER").get(0);
    Path sst =
        JournalFixture.files(header.getParent(), ".sst").stream()
            .max(Comparator.comparingLong(p -> p.toFile().length()))
            .orElseThrow();
    JournalFixture.flipByte(sst, Files.size(sst) / 4);
    Tool t = Tool.run("verify", journal.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(t.out().contains(sst.getFileName().toString()), t::toString);

    JournalFixture.flipByte(sst, Files.size(sst) / 4);
    JournalFixture.flipByte(header, 4);
    t = Tool.run("verify", journal.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(
        t.out().contains("DAMAGED Header file " + header + " is damaged: checksum mismatch"),
        t::toString);
  }

  @Test
  void convertToTheJournalsLayoutSaysThereIsNothingToDoAndRefusesToGoDown() {
    int layout = io.strata.common.Version.LAYOUT_VERSION;
    Tool t = Tool.run("convert", journal.toString(), "--to-format", Integer.toString(layout));
    assertEquals(0, t.code(), t::toString);
    assertTrue(t.out().contains("already in metadata layout " + layout), t::toString);
    // A new master's journal starts at the newest layout: an older one would drop records.
    t = Tool.run("convert", journal.toString(), "--to-format", "1");
    assertEquals(JournalToolsMain.REFUSED, t.code(), t::toString);
    assertTrue(
        t.err().contains("restore the backup that `strata fsadmin upgrade prepare` took"),
        t::toString);
    t = Tool.run("convert", journal.toString(), "--to-format", Integer.toString(layout + 1));
    assertEquals(JournalToolsMain.REFUSED, t.code(), t::toString);
  }

  record ProcessResult(int code, String out, String err) {}

  /** Runs the tools in a JVM of their own, as `strata journal` does. */
  private static ProcessResult runInAnotherProcess(String... args) throws Exception {
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                JournalToolsMain.class.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    return new ProcessResult(p.exitValue(), out, err);
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (var walk = Files.walk(from)) {
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
