package io.strata.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.CodedOutputStream;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.strata.common.conf.StrataConfig;
import io.strata.master.journal.HeaderFile;
import io.strata.master.journal.JournalSystem;
import io.strata.proto.CheckpointRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.MountRequest;
import io.strata.proto.RenameRequest;
import io.strata.proto.journal.JournalHeader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalRecoveryTest {
  @TempDir Path home;
  @TempDir Path other;

  /** Every inode's FileInfo by path, walking the namespace from the root. */
  static Map<String, FileInfo> snapshot(FileSystemMasterGrpc.FileSystemMasterBlockingStub fs) {
    Map<String, FileInfo> all = new TreeMap<>();
    List<String> pending = new ArrayList<>(List.of("/"));
    all.put("/", fs.getStatus(GetStatusRequest.newBuilder().setPath("/").build()).getFile());
    for (int i = 0; i < pending.size() && i < 10_000; i++) {
      fs.listStatus(ListStatusRequest.newBuilder().setPath(pending.get(i)).build())
          .forEachRemaining(
              page -> {
                for (FileInfo f : page.getFilesList()) {
                  all.put(f.getPath(), f);
                  if (f.getDirectory()) {
                    pending.add(f.getPath());
                  }
                }
              });
    }
    return all;
  }

  /** A mix of every kind of change the journal records. */
  private void changeEverything(FileSystemMasterGrpc.FileSystemMasterBlockingStub fs)
      throws IOException {
    Files.createDirectories(home.resolve("ufs/preexisting/deep"));
    Files.write(home.resolve("ufs/preexisting/deep/data.bin"), new byte[99]);
    fs.createDirectory(
        CreateDirectoryRequest.newBuilder().setPath("/a/b/c").setRecursive(true).build());
    for (int i = 0; i < 5; i++) {
      TestMaster.file(fs, "/a/b/f" + i, i * 100L);
    }
    fs.createFile(CreateFileRequest.newBuilder().setPath("/a/incomplete").build());
    fs.rename(RenameRequest.newBuilder().setSrcPath("/a/b/f1").setDstPath("/a/b/c/moved").build());
    fs.delete(DeleteRequest.newBuilder().setPath("/a/b/f2").build());
    fs.createFile(CreateFileRequest.newBuilder().setPath("/a/b/f3").setOverwrite(true).build());
    fs.mount(MountRequest.newBuilder().setPath("/other").setUfsUri("file://" + other).build());
    fs.createDirectory(CreateDirectoryRequest.newBuilder().setPath("/other/x").build());
    // Metadata loaded from the store is journaled too, so its ids are stable.
    fs.getStatus(GetStatusRequest.newBuilder().setPath("/preexisting/deep/data.bin").build());
  }

  @Test
  void namespaceIsExactAfterARestartWithoutCheckpoint() throws Exception {
    TestMaster m = TestMaster.start(home);
    changeEverything(m.fs);
    Map<String, FileInfo> before = snapshot(m.fs);
    long maxId = before.values().stream().mapToLong(FileInfo::getFileId).max().orElseThrow();
    m.crash();
    try (TestMaster again = m.restart()) {
      assertEquals(before, snapshot(again.fs));
      FileInfo fresh = again.mkdirs("/fresh");
      assertTrue(fresh.getFileId() > maxId, "ids are never reused");
    }
  }

  @Test
  void checkpointThenLaterEntriesRestoreExactly() throws Exception {
    TestMaster m = TestMaster.start(home, Map.of("strata.master.journal.segment.size", "1KB"));
    changeEverything(m.fs);
    long seq = m.fs.checkpoint(CheckpointRequest.getDefaultInstance()).getSequence();
    Path snapshot = newestSnapshot();
    assertEquals(seq, HeaderFile.read(snapshot.resolve("HEADER")).getFirstSequence());
    long snapshotIndex = Long.parseLong(snapshot.getFileName().toString().split("_")[1]);
    m.mkdirs("/after/checkpoint");
    m.file("/after/checkpoint/f", 5);
    m.fs.delete(DeleteRequest.newBuilder().setPath("/a/b/f0").build());
    Map<String, FileInfo> before = snapshot(m.fs);
    GetMasterInfoResponse info = m.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
    assertEquals(seq, info.getLastCheckpointSequence());
    assertTrue(info.getJournalSequence() > seq);
    m.crash();
    // Closed log segments wholly covered by the snapshot are gone.
    try (Stream<Path> files = Files.list(groupDir().resolve("current"))) {
      for (Path p : (Iterable<Path>) files::iterator) {
        String name = p.getFileName().toString();
        if (name.matches("log_\\d+-\\d+")) {
          assertTrue(
              Long.parseLong(name.substring(name.indexOf('-') + 1)) > snapshotIndex,
              name + " should be purged");
        }
      }
    }
    try (TestMaster again = m.restart()) {
      assertEquals(before, snapshot(again.fs));
      assertEquals(
          info.getJournalSequence(),
          again.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()).getJournalSequence());
    }
    // A clean stop snapshots: the next start replays nothing yet has everything.
    try (TestMaster third = TestMaster.start(home)) {
      assertEquals(before, snapshot(third.fs));
      GetMasterInfoResponse last =
          third.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
      assertEquals(last.getJournalSequence(), last.getLastCheckpointSequence());
    }
  }

  @Test
  void checkpointIsTakenAfterTheConfiguredNumberOfEntries() throws Exception {
    try (TestMaster m =
        TestMaster.start(home, Map.of("strata.master.journal.checkpoint.entries", "10"))) {
      for (int i = 0; i < 12; i++) {
        m.mkdirs("/d" + i);
      }
      // The snapshot runs in the background: a bounded wait for it, not a timing assertion.
      long checkpointed =
          await("a checkpoint")
              .atMost(Duration.ofSeconds(60))
              .pollInterval(Duration.ofMillis(50))
              .until(
                  () ->
                      m.fs
                          .getMasterInfo(GetMasterInfoRequest.getDefaultInstance())
                          .getLastCheckpointSequence(),
                  sequence -> sequence != 0);
      assertTrue(checkpointed >= 10, "checkpoint at " + checkpointed);
      assertEquals(
          checkpointed, HeaderFile.read(newestSnapshot().resolve("HEADER")).getFirstSequence());
    }
  }

  private Path groupDir() {
    return JournalSystem.groupDir(home.resolve("master/journal"));
  }

  private Path newestSnapshot() throws IOException {
    try (Stream<Path> files = Files.list(groupDir().resolve("sm"))) {
      return files
          .filter(p -> Files.isRegularFile(p.resolve("HEADER")))
          .max(
              java.util.Comparator.comparingLong(
                  p -> Long.parseLong(p.getFileName().toString().split("_")[1])))
          .orElseThrow();
    }
  }

  private Path lastSegment() throws IOException {
    try (Stream<Path> files = Files.list(groupDir().resolve("current"))) {
      return files
          .filter(p -> p.getFileName().toString().startsWith("log_"))
          .sorted()
          .reduce((a, b) -> b)
          .orElseThrow();
    }
  }

  @Test
  void damagedLogFailsStartNamingTheJournal() throws Exception {
    TestMaster m = TestMaster.start(home);
    for (int i = 0; i < 5; i++) {
      m.mkdirs("/d" + i);
    }
    m.crash();
    Path segment = lastSegment();
    byte[] bytes = Files.readAllBytes(segment);
    // Inside the entries, not the zero padding Ratis preallocates after them.
    int last = bytes.length - 1;
    while (last > 0 && bytes[last] == 0) {
      last--;
    }
    bytes[last / 2] ^= 0x5A;
    Files.write(segment, bytes);
    Exception e = assertThrows(Exception.class, () -> m.restart());
    assertTrue(e.getMessage().contains("Cannot start the journal in"), e.getMessage());
  }

  @Test
  void snapshotOfANewerFormatFailsStartWithAClearMessage() throws Exception {
    TestMaster.start(home).crash();
    Path dir = groupDir().resolve("sm").resolve("1_5");
    Files.createDirectories(dir.resolve("db"));
    JournalHeader header =
        JournalHeader.newBuilder()
            .setFormatVersion(99)
            .setRelease("9.9.9")
            .setFirstSequence(5)
            .setRaftTerm(1)
            .setRaftIndex(5)
            .setKind("snapshot")
            .build();
    Files.write(dir.resolve("HEADER"), record(header.toByteArray()));
    IOException e =
        assertThrows(
            IOException.class,
            () -> new MasterServer(StrataConfig.load(TestMaster.config(home, Map.of()))).start());
    assertTrue(
        e.getMessage().contains("holds metadata layout 99 (written by release 9.9.9)"),
        e.getMessage());
    assertTrue(
        e.getMessage().contains("reads layouts up to " + io.strata.common.Version.LAYOUT_VERSION),
        e.getMessage());
  }

  @Test
  void aSecondMasterOnTheSameJournalIsRefusedAndTheFirstKeepsItsNamespace() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      m.mkdirs("/kept/here");
      long id = m.stat("/kept/here").getFileId();
      MasterServer second = new MasterServer(StrataConfig.load(TestMaster.config(home, Map.of())));
      IOException e = assertThrows(IOException.class, second::start);
      assertTrue(
          e.getMessage().contains("in use by another process")
              && e.getMessage().contains("strata.master.journal.dir"),
          e.getMessage());
      assertEquals(id, m.stat("/kept/here").getFileId());
      m.mkdirs("/kept/after");
      try (TestMaster again = m.restartAfterClose()) {
        assertEquals(id, again.stat("/kept/here").getFileId());
        again.stat("/kept/after");
      }
    }
  }

  /** The record framing of the journal format, written independently of the master's code. */
  static byte[] record(byte[] data) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream cos = CodedOutputStream.newInstance(out);
    cos.writeUInt32NoTag(data.length);
    cos.flush();
    out.write(data);
    CRC32C crc = new CRC32C();
    crc.update(data);
    int c = (int) crc.getValue();
    out.write(new byte[] {(byte) (c >>> 24), (byte) (c >>> 16), (byte) (c >>> 8), (byte) c});
    return out.toByteArray();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void namespaceSurvivesKillOfTheMasterProcess() throws Exception {
    int port = freePort();
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("-cp");
    cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
    for (Map.Entry<String, String> e :
        TestMaster.config(home, Map.of("strata.master.rpc.port", Integer.toString(port)))
            .entrySet()) {
      cmd.add("-D" + e.getKey() + "=" + e.getValue());
    }
    cmd.add(MasterMain.class.getName());
    Path log = home.resolve("master-process.log");
    Process process =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    Map<String, FileInfo> before;
    try {
      FileSystemMasterGrpc.FileSystemMasterBlockingStub fs =
          FileSystemMasterGrpc.newBlockingStub(channel);
      // A bounded wait for a JVM to start on a shared machine, not a timing assertion.
      await("the master process to serve")
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(100))
          .failFast(
              "the master process exited",
              () ->
                  assertTrue(process.isAlive(), () -> "The master process exited: " + readLog(log)))
          .untilAsserted(
              () -> {
                try {
                  fs.withDeadlineAfter(2, TimeUnit.SECONDS)
                      .getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
                } catch (StatusRuntimeException e) {
                  fail(
                      "The master process did not start serving ("
                          + e.getStatus()
                          + "): "
                          + readLog(log));
                }
              });
      changeEverything(fs);
      before = snapshot(fs);
    } finally {
      process.destroyForcibly();
      assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the master process did not die");
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    try (TestMaster m = TestMaster.start(home)) {
      assertEquals(before, snapshot(m.fs));
    }
  }

  private static String readLog(Path log) {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(its log is unreadable: " + e + ")";
    }
  }
}
