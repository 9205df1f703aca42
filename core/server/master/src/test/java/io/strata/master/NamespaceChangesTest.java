package io.strata.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import io.strata.common.BlockIds;
import io.strata.common.rpc.MasterHeaders;
import io.strata.proto.BlockReport;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.MountRequest;
import io.strata.proto.NamespaceChange;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.RenameRequest;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.WatchChangesRequest;
import io.strata.proto.WatchChangesResponse;
import io.strata.proto.WorkerAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's change stream (WatchChanges) and the statuses that carry block lists: what a client
 * that caches statuses until they change relies on.
 */
class NamespaceChangesTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path home;

  /** A WatchChanges stream whose messages queue up as they arrive. */
  private static final class Watch
      implements AutoCloseable, ClientResponseObserver<WatchChangesRequest, WatchChangesResponse> {
    final LinkedBlockingQueue<WatchChangesResponse> messages = new LinkedBlockingQueue<>();
    private ClientCallStreamObserver<WatchChangesRequest> call;
    private boolean manualFlow;

    static Watch open(TestMaster m, long after) {
      return open(m, after, false);
    }

    /** With {@code manualFlow}, messages after the first are read only once {@link #call} asks. */
    static Watch open(TestMaster m, long after, boolean manualFlow) {
      Watch w = new Watch();
      w.manualFlow = manualFlow;
      FileSystemMasterGrpc.newStub(m.channel)
          .watchChanges(WatchChangesRequest.newBuilder().setAfterSequence(after).build(), w);
      return w;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<WatchChangesRequest> requestStream) {
      call = requestStream;
      if (manualFlow) {
        requestStream.disableAutoRequestWithInitial(1);
      }
    }

    @Override
    public void onNext(WatchChangesResponse value) {
      messages.add(value);
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}

    WatchChangesResponse next() throws InterruptedException {
      WatchChangesResponse r = messages.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      if (r == null) {
        throw new AssertionError("no message from WatchChanges within " + WAIT);
      }
      return r;
    }

    /** The changes of the next messages until {@code count} changes came (heartbeats skipped). */
    List<NamespaceChange> changes(int count) throws InterruptedException {
      List<NamespaceChange> out = new ArrayList<>();
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (out.size() < count) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError(
              "only " + describe(out) + " of " + count + " changes came" + " within " + WAIT);
        }
        WatchChangesResponse r = next();
        assertFalse(r.getReset(), "unexpected reset");
        out.addAll(r.getChangesList());
      }
      return out;
    }

    @Override
    public void close() {
      call.cancel("test done", null);
    }
  }

  private static String describe(List<NamespaceChange> changes) {
    List<String> out = new ArrayList<>();
    for (NamespaceChange c : changes) {
      out.add(c.getPath() + (c.getSubtree() ? "/**" : ""));
    }
    return String.join(" ", out);
  }

  @Test
  void everyChangeThroughTheMasterIsStreamedWithItsPathInOrder() throws Exception {
    try (TestMaster m = TestMaster.start(home);
        Watch w = Watch.open(m, 0)) {
      WatchChangesResponse first = w.next();
      assertFalse(first.getReset(), "a watcher that caches nothing is not reset");
      assertEquals(0, first.getChangesCount());
      List<NamespaceChange> all = new ArrayList<>();

      m.mkdirs("/a/b");
      assertEquals(
          "/a /a/b /",
          describe(collect(all, w.changes(3))),
          "made, with the times of the folder they were made in");
      m.file("/a/b/f", 10);
      assertEquals(
          "/a/b/f /a/b /a/b/f",
          describe(collect(all, w.changes(3))),
          "created (its folder's times move), then completed");
      m.fs.setAttribute(SetAttributeRequest.newBuilder().setPath("/a/b/f").setMode(0600).build());
      assertEquals("/a/b/f", describe(collect(all, w.changes(1))));
      m.fs.rename(RenameRequest.newBuilder().setSrcPath("/a/b/f").setDstPath("/a/g").build());
      assertEquals(
          "/a/b/f /a/g /a/b /a",
          describe(collect(all, w.changes(4))),
          "renamed from and to, and both folders' times");
      m.fs.rename(RenameRequest.newBuilder().setSrcPath("/a/b").setDstPath("/c").build());
      assertEquals(
          "/a/b/** /c/** /a /",
          describe(collect(all, w.changes(4))),
          "a directory moves its subtree");
      m.fs.delete(DeleteRequest.newBuilder().setPath("/a").setRecursive(true).build());
      assertEquals("/a/** /", describe(collect(all, w.changes(2))));
      m.fs.delete(DeleteRequest.newBuilder().setPath("/c").build());
      assertEquals(
          "/c /",
          describe(collect(all, w.changes(2))),
          "an empty directory has no subtree to drop");
      Files.createDirectories(m.ufs.resolve("mnt"));
      m.fs.mount(
          MountRequest.newBuilder()
              .setPath("/m")
              .setUfsUri("file://" + m.ufs.resolve("mnt"))
              .build());
      assertEquals(
          "/m/** /m",
          describe(collect(all, w.changes(2))),
          "a mount changes its subtree, and its mount point's status");

      for (int i = 1; i < all.size(); i++) {
        assertTrue(
            all.get(i).getSequence() >= all.get(i - 1).getSequence(),
            "changes come in journal order");
      }
      assertTrue(all.get(0).getSequence() > first.getSequence());
    }
  }

  private static List<NamespaceChange> collect(
      List<NamespaceChange> all, List<NamespaceChange> some) {
    all.addAll(some);
    return some;
  }

  @Test
  void aFirstLoadAnnouncesNoChildButASyncThatFindsOneDoesAndAnUnchangedCheckNothing()
      throws Exception {
    Files.createDirectories(home.resolve("ufs/data"));
    Files.write(home.resolve("ufs/data/x"), new byte[3]);
    Files.write(home.resolve("ufs/data/y"), new byte[3]);
    try (TestMaster m = TestMaster.start(home);
        Watch w = Watch.open(m, 0)) {
      w.next();
      assertEquals(List.of("x", "y"), m.names("/data"));
      // A listing that checks the store and finds nothing changed only refreshes sync times.
      m.fs
          .listStatus(ListStatusRequest.newBuilder().setPath("/data").setSyncIntervalMs(0).build())
          .forEachRemaining(r -> {});
      Files.write(home.resolve("ufs/data/z"), new byte[3]);
      m.fs
          .listStatus(ListStatusRequest.newBuilder().setPath("/data").setSyncIntervalMs(0).build())
          .forEachRemaining(r -> {});
      m.mkdirs("/marker");
      assertEquals(
          "/data/z /marker /",
          describe(w.changes(3)),
          "only what a client could have seen otherwise: a file found by a sync of a listed"
              + " folder, and a folder made through Strata in the never-listed root (whose"
              + " times that moves)");
    }
  }

  @Test
  void aChangeIsNamedWithTheClientThatMadeItButNotOneFoundInTheUnderStore() throws Exception {
    Files.createDirectories(home.resolve("ufs/data"));
    Files.write(home.resolve("ufs/data/x"), new byte[3]);
    try (TestMaster m = TestMaster.start(home);
        Watch w = Watch.open(m, 0)) {
      w.next();
      // Listed, so that a change a sync finds in it is announced.
      assertEquals(List.of("x"), m.names("/data"));
      asClient(m, "client-a", 1)
          .setAttribute(SetAttributeRequest.newBuilder().setPath("/data/x").setMode(0600).build());
      NamespaceChange own = w.changes(1).get(0);
      assertEquals("/data/x", own.getPath());
      assertEquals("client-a", own.getClientId(), "a change the client made is named its own");

      Files.write(home.resolve("ufs/data/x"), new byte[7]);
      Files.setLastModifiedTime(
          home.resolve("ufs/data/x"),
          java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 10_000));
      assertEquals(
          7,
          asClient(m, "client-a", 2)
              .getStatus(
                  GetStatusRequest.newBuilder().setPath("/data/x").setSyncIntervalMs(0).build())
              .getFile()
              .getLength());
      NamespaceChange found = w.changes(1).get(0);
      assertEquals("/data/x", found.getPath());
      assertEquals(
          "",
          found.getClientId(),
          "what a sync found in the under store is nobody's"
              + " own change, even the client's whose call found it: its cache lacks it");
    }
  }

  /** The master as a client sees it that names itself and its call in headers. */
  private static FileSystemMasterGrpc.FileSystemMasterBlockingStub asClient(
      TestMaster m, String clientId, long callId) {
    Metadata headers = new Metadata();
    headers.put(MasterHeaders.CLIENT_ID, clientId);
    headers.put(MasterHeaders.CALL_ID, Long.toString(callId));
    return m.fs.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
  }

  @Test
  void aWatcherThatReconnectsGetsWhatItMissedOrAResetWhenItIsTooOld() throws Exception {
    try (TestMaster m = TestMaster.start(home, Map.of("strata.master.watch.history.size", "4"))) {
      long seen;
      try (Watch w = Watch.open(m, 0)) {
        seen = w.next().getSequence();
      }
      m.mkdirs("/one");
      m.mkdirs("/two");
      try (Watch w = Watch.open(m, seen)) {
        WatchChangesResponse first = w.next();
        assertFalse(first.getReset());
        assertEquals(
            "/one / /two /",
            describe(first.getChangesList()),
            "the changes after the watcher's position come first");
        seen = first.getSequence();
      }
      for (int i = 0; i < 4; i++) {
        m.mkdirs("/more" + i);
      }
      try (Watch w = Watch.open(m, seen)) {
        assertTrue(w.next().getReset(), "more was missed than the history keeps");
      }
      try (Watch w = Watch.open(m, Long.MAX_VALUE / 2)) {
        assertTrue(w.next().getReset(), "a position this master never reached");
      }
      long now;
      try (Watch w = Watch.open(m, 0)) {
        now = w.next().getSequence();
      }
      try (TestMaster again = m.restartAfterClose();
          Watch w = Watch.open(again, now)) {
        WatchChangesResponse first = w.next();
        assertFalse(first.getReset(), "nothing changed while the master was down");
        assertEquals(0, first.getChangesCount());
        again.mkdirs("/after");
        assertEquals("/after /", describe(w.changes(2)));
      }
    }
  }

  @Test
  void aWatcherThatDoesNotReadIsResetInsteadOfBufferedWithoutBound() throws Exception {
    try (TestMaster m = TestMaster.start(home, Map.of("strata.master.watch.queue.size", "50"));
        Watch w = Watch.open(m, 0, true)) {
      w.next();
      // About 3 MB of changes: more than the stream's flow-control window (1 MiB) holds, so the
      // master must hold them back.
      String deep = ("/" + "x".repeat(200)).repeat(5);
      for (int i = 0; i < 3000; i++) {
        m.mkdirs(deep + "/" + i);
      }
      w.call.request(Integer.MAX_VALUE);
      boolean reset = false;
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (!reset && System.nanoTime() < deadline) {
        reset = w.next().getReset();
      }
      assertTrue(reset, "the lagging watcher is told to reset");
    }
  }

  @Test
  void statusesAndListingsCarryBlocksWithTheirHoldersWhenAsked() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      m.mkdirs("/d");
      FileInfo f = m.file("/d/f", 3 << 20);
      m.file("/d/g", 0);
      long block0 = BlockIds.blockId(f.getFileId(), 0);
      long worker =
          m.blocks
              .registerWorker(
                  RegisterWorkerRequest.newBuilder()
                      .setAddress(
                          WorkerAddress.newBuilder()
                              .setHost("127.0.0.1")
                              .setRpcPort(7002)
                              .setDataPort(7001))
                      .addBlocks(
                          BlockReport.newBuilder()
                              .setBlockId(block0)
                              .setLength(f.getBlockSize())
                              .setTier("MEM"))
                      .build())
              .getWorkerId();

      assertEquals(0, m.stat("/d/f").getBlocksCount(), "only when asked");
      FileInfo withBlocks =
          m.fs
              .getStatus(
                  GetStatusRequest.newBuilder().setPath("/d/f").setIncludeBlocks(true).build())
              .getFile();
      assertEquals(BlockIds.blockCount(3 << 20, f.getBlockSize()), withBlocks.getBlocksCount());
      assertEquals(block0, withBlocks.getBlocks(0).getBlockId());
      assertEquals(worker, withBlocks.getBlocks(0).getLocations(0).getWorkerId());
      assertEquals(-1, withBlocks.getSyncIntervalMs(), "the default sync interval is never");

      List<FileInfo> listed = new ArrayList<>();
      m.fs
          .listStatus(ListStatusRequest.newBuilder().setPath("/d").setIncludeBlocks(true).build())
          .forEachRemaining(r -> listed.addAll(r.getFilesList()));
      assertEquals(withBlocks.getBlocksList(), listed.get(0).getBlocksList());
      assertEquals(0, listed.get(1).getBlocksCount(), "an empty file has no block");
      assertEquals(0, m.list("/d").get(0).getBlocksCount(), "only when asked");

      Files.createDirectories(m.ufs.resolve("synced"));
      m.fs.mount(
          MountRequest.newBuilder()
              .setPath("/s")
              .setUfsUri("file://" + m.ufs.resolve("synced"))
              .putOptions("sync.interval", "5min")
              .build());
      assertEquals(300_000, m.stat("/s").getSyncIntervalMs(), "the mount's own interval");
    }
  }
}
