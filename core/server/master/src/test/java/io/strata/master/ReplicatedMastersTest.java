package io.strata.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.strata.common.conf.StrataConfig;
import io.strata.common.rpc.MasterHeaders;
import io.strata.master.journal.JournalSystem;
import io.strata.proto.CheckpointRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.JournalMasterGrpc;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real masters in this JVM replicating one journal over loopback: the group elects a leader,
 * followers redirect, a change made on the leader is on every master, a lost leader is replaced, a
 * master whose journal was deleted catches up from a snapshot, and a changing call retried with the
 * same call id is answered without being applied twice.
 */
class ReplicatedMastersTest {
  private static final int MASTERS = 3;
  @TempDir Path home;
  private final int[] rpcPorts = new int[MASTERS];
  private final int[] journalPorts = new int[MASTERS];
  private final MasterServer[] masters = new MasterServer[MASTERS];
  private final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (ManagedChannel c : channels) {
      c.shutdownNow();
    }
    for (MasterServer m : masters) {
      if (m != null) {
        m.close();
      }
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private Map<String, String> config(int i) {
    List<String> rpc = new ArrayList<>();
    List<String> journal = new ArrayList<>();
    for (int j = 0; j < MASTERS; j++) {
      rpc.add("127.0.0.1:" + rpcPorts[j]);
      journal.add("127.0.0.1:" + journalPorts[j]);
    }
    Map<String, String> c = new HashMap<>(TestMaster.config(home, Map.of()));
    c.put("strata.master.rpc.port", Integer.toString(rpcPorts[i]));
    c.put("strata.master.addresses", String.join(",", rpc));
    c.put("strata.master.journal.addresses", String.join(",", journal));
    c.put("strata.master.journal.dir", home.resolve("m" + i + "/journal").toString());
    c.put("strata.master.metastore.dir", home.resolve("m" + i + "/metastore").toString());
    // Snapshots (and log purges) every few entries, so that a returning master is behind the
    // leader's log and must be sent a snapshot.
    c.put("strata.master.journal.checkpoint.entries", "20");
    return c;
  }

  private void start(int i) throws Exception {
    masters[i] = new MasterServer(StrataConfig.load(config(i)));
    masters[i].start();
  }

  private FileSystemMasterGrpc.FileSystemMasterBlockingStub fs(int i) {
    ManagedChannel c =
        NettyChannelBuilder.forAddress("127.0.0.1", rpcPorts[i]).usePlaintext().build();
    channels.add(c);
    return FileSystemMasterGrpc.newBlockingStub(c).withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  /** Waits (bounded) until one running master leads; returns its index. */
  private int awaitLeader() {
    return await("a running master to lead")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(this::leaderIndex, i -> i >= 0);
  }

  /** The index of a running master that leads, or -1. */
  private int leaderIndex() {
    for (int i = 0; i < MASTERS; i++) {
      if (masters[i] != null && masters[i].journal().isLeader()) {
        return i;
      }
    }
    return -1;
  }

  private static FileInfo mkdirs(
      FileSystemMasterGrpc.FileSystemMasterBlockingStub fs, String path) {
    return fs.createDirectory(
            CreateDirectoryRequest.newBuilder()
                .setPath(path)
                .setRecursive(true)
                .setAllowExists(true)
                .build())
        .getDirectory();
  }

  /**
   * Creates a directory on whichever master leads, trying again (bounded) when leadership moves
   * meanwhile, as a client would; returns the leader's index.
   */
  private int mkdirsOnLeader(String path) throws Exception {
    onLeader(fs -> mkdirs(fs, path));
    return awaitLeader();
  }

  private <T> T onLeader(
      java.util.function.Function<FileSystemMasterGrpc.FileSystemMasterBlockingStub, T> call)
      throws Exception {
    return await("a leading master to take the call")
        .atMost(Duration.ofSeconds(120))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(100))
        .ignoreExceptionsMatching(
            e ->
                e instanceof StatusRuntimeException s
                    && s.getStatus().getCode() == Status.Code.UNAVAILABLE)
        .until(() -> call.apply(fs(awaitLeader())), answer -> true);
  }

  @Test
  void groupReplicatesFailsOverAndCatchesUpFromASnapshot() throws Exception {
    for (int i = 0; i < MASTERS; i++) {
      rpcPorts[i] = freePort();
      journalPorts[i] = freePort();
    }
    for (int i = 0; i < MASTERS; i++) {
      start(i);
    }
    int leader = mkdirsOnLeader("/replicated/dir");
    FileInfo made =
        onLeader(
            fs ->
                fs.getStatus(GetStatusRequest.newBuilder().setPath("/replicated/dir").build())
                    .getFile());
    long seq = masters[leader].journal().lastSequence();
    for (int i = 0; i < MASTERS; i++) {
      int applier = i;
      await("master " + applier + " to apply sequence " + seq)
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> masters[applier].journal().lastSequence(), s -> s >= seq);
      assertNotNull(masters[i].journal().store().get(made.getFileId()), "master " + i);
    }

    // A follower redirects, naming the leader.
    int follower = (leader + 1) % MASTERS;
    StatusRuntimeException redirect =
        org.junit.jupiter.api.Assertions.assertThrows(
            StatusRuntimeException.class,
            () ->
                fs(follower)
                    .getStatus(GetStatusRequest.newBuilder().setPath("/replicated").build()));
    assertEquals(Status.Code.UNAVAILABLE, redirect.getStatus().getCode());
    assertEquals("127.0.0.1:" + rpcPorts[leader], redirect.getTrailers().get(MasterHeaders.LEADER));

    // Any master describes the group.
    ManagedChannel c =
        NettyChannelBuilder.forAddress("127.0.0.1", rpcPorts[follower]).usePlaintext().build();
    channels.add(c);
    GetQuorumInfoResponse quorum =
        JournalMasterGrpc.newBlockingStub(c)
            .getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance());
    assertEquals("127.0.0.1:" + rpcPorts[leader], quorum.getLeaderAddress());
    assertEquals(MASTERS, quorum.getPeersCount());

    // Lose the leader: the other two elect one, which has every change.
    masters[leader].closeWithoutCheckpoint();
    masters[leader] = null;
    int second = mkdirsOnLeader("/after/failover");
    for (int i = 0; i < 60; i++) {
      second = mkdirsOnLeader("/after/failover/" + i);
    }
    assertNotEquals(leader, second);
    long id =
        onLeader(
            fs ->
                fs.getStatus(GetStatusRequest.newBuilder().setPath("/replicated/dir").build())
                    .getFile()
                    .getFileId());
    assertEquals(made.getFileId(), id);

    // The old leader returns as a follower and catches up from the log.
    start(leader);
    long now = masters[awaitLeader()].journal().lastSequence();
    await("master " + leader + " to apply sequence " + now)
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> masters[leader].journal().lastSequence(), s -> s >= now);

    // A follower whose journal is lost catches up from the leader's snapshot.
    second = awaitLeader();
    int lost = (second + 1) % MASTERS;
    masters[lost].closeWithoutCheckpoint();
    masters[lost] = null;
    deleteTree(home.resolve("m" + lost));
    for (int i = 0; i < 20; i++) {
      second = mkdirsOnLeader("/while/away/" + i);
    }
    // A client's call applied while it was away: the snapshot it is sent must carry the call, or
    // a retry of it on this master (when it leads) would be taken for a new call.
    Metadata asked = new Metadata();
    asked.put(MasterHeaders.CLIENT_ID, "client-away");
    asked.put(MasterHeaders.CALL_ID, "99");
    onLeader(
        fs ->
            fs.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(asked))
                .createDirectory(CreateDirectoryRequest.newBuilder().setPath("/asked").build()));
    onLeader(fs -> fs.checkpoint(CheckpointRequest.getDefaultInstance()));
    start(lost);
    long last = masters[awaitLeader()].journal().lastSequence();
    await("master " + lost + " to apply sequence " + last)
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> masters[lost].journal().lastSequence(), s -> s >= last);
    assertNotNull(masters[lost].journal().store().get(made.getFileId()));
    assertTrue(
        masters[lost].journal().calls().wasApplied("client-away", 99),
        "a call in the snapshot it was sent is known as applied");
    assertTrue(
        Files.isDirectory(
            JournalSystem.groupDir(home.resolve("m" + lost + "/journal")).resolve("sm")));
  }

  @Test
  void aRetriedChangeIsAnsweredWithoutBeingAppliedTwice() throws Exception {
    rpcPorts[0] = freePort();
    journalPorts[0] = freePort();
    Map<String, String> c = new HashMap<>(TestMaster.config(home, Map.of()));
    masters[0] = new MasterServer(StrataConfig.load(c));
    masters[0].start();
    ManagedChannel ch =
        NettyChannelBuilder.forAddress("127.0.0.1", masters[0].rpcPort()).usePlaintext().build();
    channels.add(ch);
    Metadata headers = new Metadata();
    headers.put(MasterHeaders.CLIENT_ID, "client-a");
    headers.put(MasterHeaders.CALL_ID, "7");
    FileSystemMasterGrpc.FileSystemMasterBlockingStub retried =
        FileSystemMasterGrpc.newBlockingStub(ch)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    CreateDirectoryRequest create = CreateDirectoryRequest.newBuilder().setPath("/once").build();
    FileInfo first = retried.createDirectory(create).getDirectory();
    long sequence = masters[0].journal().lastSequence();
    // The same call again: answered from the state, not applied (no "already exists").
    FileInfo again = retried.createDirectory(create).getDirectory();
    assertEquals(first.getFileId(), again.getFileId());
    assertEquals(sequence, masters[0].journal().lastSequence());
    // A new call id is a new call: it is applied.
    Metadata next = new Metadata();
    next.put(MasterHeaders.CLIENT_ID, "client-a");
    next.put(MasterHeaders.CALL_ID, "8");
    FileSystemMasterGrpc.newBlockingStub(ch)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(next))
        .delete(DeleteRequest.newBuilder().setPath("/once").build());
    StatusRuntimeException gone =
        org.junit.jupiter.api.Assertions.assertThrows(
            StatusRuntimeException.class,
            () ->
                FileSystemMasterGrpc.newBlockingStub(ch)
                    .getStatus(GetStatusRequest.newBuilder().setPath("/once").build()));
    assertEquals(Status.Code.NOT_FOUND, gone.getStatus().getCode());
  }

  @Test
  void threeMastersStartAFreshGroupFromOneBackup() throws Exception {
    io.strata.proto.BackupResponse backup;
    long inodes;
    try (TestMaster single = TestMaster.start(home.resolve("single"))) {
      single.mkdirs("/kept/in/the/backup");
      backup =
          JournalMasterGrpc.newBlockingStub(single.channel)
              .backup(
                  io.strata.proto.BackupRequest.newBuilder()
                      .setDir(home.resolve("backups").toString())
                      .build());
      inodes = backup.getInodeCount();
    }
    for (int i = 0; i < MASTERS; i++) {
      rpcPorts[i] = freePort();
      journalPorts[i] = freePort();
    }
    for (int i = 0; i < MASTERS; i++) {
      Map<String, String> c = config(i);
      c.put("strata.master.root.ufs", "file://" + home.resolve("single/ufs"));
      c.put("strata.master.restore.backup", backup.getPath());
      masters[i] = new MasterServer(StrataConfig.load(c));
      masters[i].start();
    }
    long id =
        onLeader(
            fs ->
                fs.getStatus(
                        GetStatusRequest.newBuilder()
                            .setPath("/kept/in/the/backup")
                            .setSyncIntervalMs(-1)
                            .build())
                    .getFile()
                    .getFileId());
    assertTrue(id > 0);
    for (int i = 0; i < MASTERS; i++) {
      assertEquals(inodes, masters[i].journal().store().inodeCount(), "master " + i);
    }
    mkdirsOnLeader("/after/restore");
  }

  private static void deleteTree(Path dir) throws Exception {
    try (var walk = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
