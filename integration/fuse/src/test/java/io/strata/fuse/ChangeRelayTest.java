package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.github.benmanes.caffeine.cache.Ticker;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.NamespaceChange;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ChangeRelayTest {
  private static final String OWN = "mount-1";
  private static final int GETATTR = 3;

  private final Map<String, FileInfo> namespace = new HashMap<>();
  private final Map<String, Integer> loads = new HashMap<>();
  private final MetadataCache metadata =
      new MetadataCache(
          path -> {
            loads.merge(path, 1, Integer::sum);
            FileInfo info = namespace.get(path);
            if (info == null) {
              throw new StrataException(ErrorCode.NOT_FOUND, "Path does not exist: " + path);
            }
            return info;
          },
          null,
          Runnable::run,
          Duration.ofHours(1),
          100,
          Ticker.systemTicker());
  private final KernelEntries kernel = new KernelEntries(100, 100);
  private final ChangeRelay relay =
      new ChangeRelay("/", metadata, kernel, Duration.ofSeconds(1), OWN);

  /** Node ids the kernel was told to drop, as the mount's channel would pass them on. */
  private final BlockingQueue<Long> droppedNodes = new LinkedBlockingQueue<>();

  /** Names the kernel was told to drop, as "parent node/name". */
  private final BlockingQueue<String> droppedNames = new LinkedBlockingQueue<>();

  @BeforeEach
  void attachKernel() {
    kernel.attach(
        new KernelEntries.Notifier() {
          @Override
          public void invalidateEntry(long parent, String name) {
            droppedNames.add(parent + "/" + name);
          }

          @Override
          public void invalidateNode(long node) {
            droppedNodes.add(node);
          }
        });
    kernel.seen("/a", GETATTR, 42);
    kernel.seen("/u", GETATTR, 43);
  }

  @AfterEach
  void closeKernel() {
    kernel.close();
  }

  private static FileInfo file(long inode, int links) {
    return FileInfo.newBuilder().setInodeNumber(inode).setLinkCount(links).setName("f").build();
  }

  private static NamespaceChange change(String path, String client) {
    return NamespaceChange.newBuilder().setPath(path).setClientId(client).build();
  }

  @Test
  void ownChangesOfAFileWithOneNameKeepTheCachedStatus() throws Exception {
    relay.connected(false);
    namespace.put("/a", file(7, 1));
    metadata.get("/a");
    relay.changed(List.of(change("/a", OWN)));
    metadata.get("/a");
    assertEquals(1, loads.get("/a"), "the mount kept its own change in its cache");

    relay.changed(List.of(change("/a", "another-mount")));
    metadata.get("/a");
    assertEquals(2, loads.get("/a"), "another client's change drops the cached status");
    // The kernel is told of the other client's change only (the queue sends in order).
    assertEquals(42L, droppedNodes.poll(10, TimeUnit.SECONDS));
    assertNull(droppedNodes.poll(200, TimeUnit.MILLISECONDS));
  }

  @Test
  void ownChangesReachOtherNamesOfALinkedFile() throws Exception {
    relay.connected(false);
    namespace.put("/u", file(9, 2));
    assertEquals(2, metadata.get("/u").getLinkCount());
    // The mount removed another name of /u, one it never saw: the master names /u in a notice.
    namespace.put("/u", file(9, 1));
    relay.changed(List.of(change("/u", OWN)));
    assertEquals(1, metadata.get("/u").getLinkCount());
    assertEquals(2, loads.get("/u"));
    assertEquals(43L, droppedNodes.poll(10, TimeUnit.SECONDS), "the kernel drops /u too");
  }

  @Test
  void ownChangesOfAPathTheCacheDoesNotHoldReachTheKernel() throws Exception {
    relay.connected(false);
    relay.changed(List.of(change("/a", OWN)));
    assertEquals(42L, droppedNodes.poll(10, TimeUnit.SECONDS));
  }

  @Test
  void ownChangesOfALinkedFileDropItsNodeButKeepItsNameWhereTheNodeIsKnown() throws Exception {
    relay.connected(false);
    namespace.put("/u", file(9, 2));
    namespace.put("/v", file(9, 2));
    metadata.get("/u");
    metadata.get("/v");
    // /u's node is known (the kernel asked for its attributes); /v's never was.
    relay.changed(List.of(change("/u", OWN), change("/v", OWN)));
    assertEquals(43L, droppedNodes.poll(10, TimeUnit.SECONDS), "/u's attributes go");
    assertEquals(
        "1/v",
        droppedNames.poll(10, TimeUnit.SECONDS),
        "a name whose node the mount does not know is dropped whole");
    assertNull(
        droppedNames.poll(200, TimeUnit.MILLISECONDS),
        "/u keeps its name, and with it the node the mount knows");

    relay.changed(List.of(change("/u", "another-mount")));
    assertEquals(
        "1/u",
        droppedNames.poll(10, TimeUnit.SECONDS),
        "another client's change drops the name too: it may have replaced the file");
  }
}
