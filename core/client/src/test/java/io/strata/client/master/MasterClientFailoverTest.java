package io.strata.client.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.strata.common.conf.ConfigException;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.rpc.MasterHeaders;
import io.strata.proto.BackupRequest;
import io.strata.proto.BackupResponse;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetStatusResponse;
import io.strata.proto.JournalMasterGrpc;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import io.strata.proto.NamespaceChange;
import io.strata.proto.WatchChangesRequest;
import io.strata.proto.WatchChangesResponse;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client among several masters finds the leader, follows it when it changes, repeats one call id
 * on every attempt of a call, and gives up after the fail-over timeout naming the masters; streams
 * go to the leader too. The masters are small gRPC servers on 127.0.0.1.
 */
@Timeout(60)
class MasterClientFailoverTest {
  private static final GetStatusRequest ROOT = GetStatusRequest.newBuilder().setPath("/").build();

  private FakeMasterGroup masters;
  private MasterClient client;

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
    if (masters != null) {
      masters.close();
    }
  }

  /** File-system calls answer with the address of the master that served them. */
  private static final class AddressedFileSystem
      extends FileSystemMasterGrpc.FileSystemMasterImplBase {
    private final Supplier<String> self;

    AddressedFileSystem(Supplier<String> self) {
      this.self = self;
    }

    @Override
    public void getStatus(GetStatusRequest request, StreamObserver<GetStatusResponse> out) {
      out.onNext(
          GetStatusResponse.newBuilder()
              .setFile(FileInfo.newBuilder().setPath(self.get()))
              .build());
      out.onCompleted();
    }

    @Override
    public void listStatus(ListStatusRequest request, StreamObserver<ListStatusResponse> out) {
      out.onNext(
          ListStatusResponse.newBuilder()
              .addFiles(FileInfo.newBuilder().setName(self.get()))
              .build());
      out.onCompleted();
    }

    @Override
    public void watchChanges(
        WatchChangesRequest request, StreamObserver<WatchChangesResponse> out) {
      // One message, and the stream stays open as the master's does.
      out.onNext(
          WatchChangesResponse.newBuilder()
              .setSequence(1)
              .addChanges(NamespaceChange.newBuilder().setSequence(1).setPath(self.get()))
              .build());
    }
  }

  /** Quorum answers and backups name the master that served them. */
  private static final class AddressedJournal extends JournalMasterGrpc.JournalMasterImplBase {
    private final Supplier<String> self;

    AddressedJournal(Supplier<String> self) {
      this.self = self;
    }

    @Override
    public void getQuorumInfo(
        GetQuorumInfoRequest request, StreamObserver<GetQuorumInfoResponse> out) {
      out.onNext(GetQuorumInfoResponse.newBuilder().setAnsweredBy(self.get()).build());
      out.onCompleted();
    }

    @Override
    public void backup(BackupRequest request, StreamObserver<BackupResponse> out) {
      out.onNext(BackupResponse.newBuilder().setWrittenBy(self.get()).build());
      out.onCompleted();
    }
  }

  private void startMasters(int size) throws Exception {
    masters =
        new FakeMasterGroup(
            size,
            self ->
                List.<BindableService>of(new AddressedFileSystem(self), new AddressedJournal(self)),
            Set.of(JournalMasterGrpc.getGetQuorumInfoMethod().getFullMethodName()));
  }

  private static Map<String, String> conf(String addresses) {
    Map<String, String> conf = new HashMap<>();
    conf.put("strata.master.addresses", addresses);
    conf.put("strata.client.rpc.timeout", "5s");
    conf.put("strata.client.master.retry.base.sleep", "10ms");
    conf.put("strata.client.master.retry.max.sleep", "50ms");
    conf.put("strata.client.master.retry.max.duration", "100ms");
    conf.put("strata.client.master.failover.timeout", "5s");
    return conf;
  }

  private MasterClient connect(Map<String, String> conf) {
    client = new MasterClient(StrataConfig.load(conf));
    return client;
  }

  private MasterClient connectToAll() {
    return connect(conf(String.join(",", masters.addresses())));
  }

  /** How many calls master {@code i} received, refused or served. */
  private int calls(int i) {
    return masters.calls(masters.address(i));
  }

  private static String servedBy(MasterClient c) throws StrataException {
    return c.call(s -> s.getStatus(ROOT)).getFile().getPath();
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  @Test
  void callLandsOnTheLeaderAFollowerNames() throws Exception {
    startMasters(3);
    masters.lead(masters.address(2));
    connectToAll();
    assertEquals(masters.address(2), servedBy(client));
    // Straight from the first follower to the leader it named, past the other follower.
    assertEquals(1, calls(0));
    assertEquals(0, calls(1));
    assertEquals(masters.address(2), client.target());
    assertEquals(masters.address(2), servedBy(client));
    assertEquals(1, calls(0));
  }

  @Test
  void callFollowsANewLeaderWhenTheOldOneRefuses() throws Exception {
    startMasters(3);
    masters.lead(masters.address(1));
    connectToAll();
    assertEquals(masters.address(1), servedBy(client));
    masters.lead(masters.address(2));
    assertEquals(masters.address(2), servedBy(client));
    assertEquals(2, calls(1));
    assertEquals(1, calls(0));
  }

  @Test
  void callLooksForTheLeaderThroughAnElection() throws Exception {
    startMasters(3);
    masters.lead(null);
    connectToAll();
    CompletableFuture<String> served =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return servedBy(client);
              } catch (StrataException e) {
                throw new IllegalStateException(e);
              }
            });
    // Let every master refuse a few rounds without naming a leader, then elect one.
    await("the third master to refuse two calls")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(5))
        .until(() -> calls(2) >= 2);
    masters.lead(masters.address(1));
    assertEquals(masters.address(1), served.get(10, TimeUnit.SECONDS));
  }

  @Test
  void attemptsOfOneCallCarryOneCallId() throws Exception {
    startMasters(3);
    masters.lead(masters.address(2));
    connectToAll();
    servedBy(client);
    Metadata refused = masters.headers(masters.address(0)).get(0);
    Metadata served = masters.headers(masters.address(2)).get(0);
    String clientId = refused.get(MasterHeaders.CLIENT_ID);
    assertNotNull(clientId);
    assertEquals(clientId, served.get(MasterHeaders.CLIENT_ID));
    assertEquals(refused.get(MasterHeaders.CALL_ID), served.get(MasterHeaders.CALL_ID));
    servedBy(client);
    Metadata next = masters.headers(masters.address(2)).get(1);
    assertEquals(clientId, next.get(MasterHeaders.CLIENT_ID));
    assertNotEquals(served.get(MasterHeaders.CALL_ID), next.get(MasterHeaders.CALL_ID));
  }

  @Test
  void callGivesUpAfterTheFailoverTimeoutNamingEveryMaster() throws Exception {
    startMasters(3);
    masters.lead(null);
    Map<String, String> conf = conf(String.join(",", masters.addresses()));
    conf.put("strata.client.master.failover.timeout", "400ms");
    connect(conf);
    long start = System.nanoTime();
    StrataException e = assertThrows(StrataException.class, () -> servedBy(client));
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertEquals(ErrorCode.UNAVAILABLE, e.code());
    assertTrue(tookMs >= 400 && tookMs < 10_000, "took " + tookMs + " ms");
    String m = e.getMessage();
    assertTrue(
        m.startsWith(
            "Cannot reach a leading Strata master among "
                + String.join(", ", masters.addresses())
                + " (tried for 400ms; "),
        m);
    for (String address : masters.addresses()) {
      assertTrue(
          m.contains(
              address + " [This master (" + address + ") is not the leader; no leader is known]"),
          m);
      assertTrue(masters.calls(address) >= 2, address + " was asked once only");
    }
    assertTrue(m.contains("set strata.master.addresses"), m);
    assertTrue(m.contains("strata.client.master.failover.timeout"), m);
  }

  @Test
  void deadMasterIsPassedOver() throws Exception {
    startMasters(1);
    masters.lead(masters.address(0));
    String dead = "127.0.0.1:" + freePort();
    connect(conf(dead + "," + masters.address(0)));
    assertEquals(masters.address(0), servedBy(client));
  }

  @Test
  void pausedMasterIsPassedOverAfterItsDeadline() throws Exception {
    startMasters(2);
    masters.lead(masters.address(1));
    masters.pause(masters.address(0));
    Map<String, String> conf = conf(String.join(",", masters.addresses()));
    conf.put("strata.client.rpc.timeout", "300ms");
    connect(conf);
    assertEquals(masters.address(1), servedBy(client));
    // The same call, not a new one, reached the leader.
    assertEquals(
        masters.headers(masters.address(0)).get(0).get(MasterHeaders.CALL_ID),
        masters.headers(masters.address(1)).get(0).get(MasterHeaders.CALL_ID));
  }

  @Test
  void deadlineOfTheOneMasterIsNotRetried() throws Exception {
    startMasters(1);
    masters.lead(masters.address(0));
    masters.pause(masters.address(0));
    Map<String, String> conf = conf(masters.address(0));
    conf.put("strata.client.rpc.timeout", "200ms");
    connect(conf);
    StrataException e = assertThrows(StrataException.class, () -> servedBy(client));
    assertEquals(ErrorCode.DEADLINE_EXCEEDED, e.code());
    assertEquals(1, calls(0));
  }

  @Test
  void leaderNamedOutsideTheListIsFollowed() throws Exception {
    startMasters(2);
    masters.lead(masters.address(1));
    connect(conf(masters.address(0)));
    assertEquals(masters.address(1), servedBy(client));
    assertEquals(List.of(masters.address(0)), client.addresses().all());
    assertEquals(masters.address(1), client.target());
  }

  @Test
  void blockingStreamRetriedAfterARefusalGoesToTheLeader() throws Exception {
    startMasters(2);
    masters.lead(masters.address(1));
    connectToAll();
    StreamRetries retries = client.streamRetries();
    String first = null;
    // As StatusListing does: open, and on UNAVAILABLE wait to retry (which moves on).
    for (int attempt = 0; attempt < 5 && first == null; attempt++) {
      try {
        Iterator<ListStatusResponse> pages =
            retries.open(s -> s.listStatus(ListStatusRequest.newBuilder().setPath("/").build()));
        first = pages.next().getFiles(0).getName();
      } catch (StatusRuntimeException e) {
        retries.afterFailure(e, false);
      }
    }
    assertEquals(masters.address(1), first);
    assertEquals(1, calls(0));
  }

  @Test
  void watchStreamReopenedAfterARefusalGoesToTheLeader() throws Exception {
    startMasters(3);
    masters.lead(masters.address(2));
    connectToAll();
    String changedPath = null;
    // As NamespaceWatch does: on an error, move on and open the stream again.
    for (int attempt = 0; attempt < 5 && changedPath == null; attempt++) {
      CompletableFuture<Object> outcome = new CompletableFuture<>();
      client.watchChanges(
          WatchChangesRequest.getDefaultInstance(),
          new StreamObserver<>() {
            @Override
            public void onNext(WatchChangesResponse value) {
              outcome.complete(value);
            }

            @Override
            public void onError(Throwable t) {
              outcome.complete(t);
            }

            @Override
            public void onCompleted() {
              outcome.complete("completed");
            }
          });
      Object got = outcome.get(10, TimeUnit.SECONDS);
      if (got instanceof Throwable t) {
        client.watchBroke(t, false);
      } else if (got instanceof WatchChangesResponse r) {
        changedPath = r.getChanges(0).getPath();
      }
    }
    assertEquals(masters.address(2), changedPath);
    assertEquals(1, calls(0));
    assertEquals(0, calls(1));
  }

  @Test
  void journalCallsGoToTheLeaderOrToTheMasterAsked() throws Exception {
    startMasters(2);
    masters.lead(masters.address(1));
    connectToAll();
    assertEquals(
        masters.address(1),
        client.callJournal(s -> s.backup(BackupRequest.getDefaultInstance())).getWrittenBy());
    for (String address : masters.addresses()) {
      assertEquals(
          address,
          client
              .callJournalAt(
                  address, s -> s.getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance()))
              .getAnsweredBy());
    }
    StrataException refused =
        assertThrows(
            StrataException.class,
            () ->
                client.callJournalAt(
                    masters.address(0), s -> s.backup(BackupRequest.getDefaultInstance())));
    assertEquals(ErrorCode.UNAVAILABLE, refused.code());
    assertTrue(
        refused
            .getMessage()
            .startsWith(
                "The Strata master at "
                    + masters.address(0)
                    + " did not serve the call: This master"),
        refused.getMessage());
  }

  @Test
  void addressesComeFromTheListOrFromHostAndPort() {
    Map<String, String> conf = new HashMap<>();
    conf.put("strata.master.addresses", " m1:19200, m2:19201 ,m1:19200,");
    MasterAddresses listed = MasterAddresses.of(StrataConfig.load(conf));
    assertEquals(List.of("m1:19200", "m2:19201"), listed.all());
    assertTrue(listed.listed() && listed.several());

    conf.put("strata.master.addresses", "");
    conf.put("strata.master.hostname", "m3");
    conf.put("strata.master.rpc.port", "19300");
    MasterAddresses one = MasterAddresses.of(StrataConfig.load(conf));
    assertEquals(List.of("m3:19300"), one.all());
    assertTrue(!one.listed() && !one.several());

    conf.put("strata.master.addresses", "m1:19200,m2");
    ConfigException bad =
        assertThrows(ConfigException.class, () -> MasterAddresses.of(StrataConfig.load(conf)));
    assertTrue(
        bad.getMessage().contains("'strata.master.addresses'")
            && bad.getMessage().contains("'m2' is not host:port"),
        bad.getMessage());
  }
}
