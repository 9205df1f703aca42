package io.strata.master.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.PathNames;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.metastore.InodeStore;
import io.strata.master.ufs.StoreGuards;
import io.strata.proto.FileInfo;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.underfs.UnderStores;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's applied namespace on a real metastore: walks by path, paths by id, pages of a
 * folder, the files below an inode, ids, and reads that need no store because the call's sync
 * interval is never.
 */
class InodeTreeTest {
  @TempDir Path dir;
  private InodeStore store;
  private InodeTree tree;
  private long sequence;

  @BeforeEach
  void setUp() throws IOException {
    MeterRegistry registry = new SimpleMeterRegistry();
    store = InodeStore.open(dir.resolve("meta"), 16, registry);
    MountTable mounts = new MountTable("file://" + dir.resolve("ufs"), List.of());
    StrataConfig conf = StrataConfig.load(Map.of());
    UfsMetadataLoader loader =
        new UfsMetadataLoader(
            new UnderStores(), new StoreGuards(conf, registry), 1 << 20, "o", "g", registry);
    WorkerRegistry workers = new WorkerRegistry(Duration.ofMinutes(1), id -> true, registry);
    SyncPolicy policy = new SyncPolicy(mounts, SyncInterval.NEVER, 100, registry);
    tree = new InodeTree(store, mounts, loader, workers, policy);
    // / (1), /a (2), /a/f (3), /a/.strata-uploads (4), /a/b (5), /a/b/g (6, content under 40).
    apply(folder(InodeStore.ROOT_ID, 0, ""));
    apply(folder(2, 1, "a"));
    apply(file(3, 2, "f"));
    apply(folder(4, 2, PathNames.UPLOADS_FOLDER));
    apply(folder(5, 2, "b"));
    apply(file(6, 5, "g").setDataId(40));
  }

  @AfterEach
  void tearDown() {
    store.close();
  }

  private void apply(InodeEntry.Builder n) throws IOException {
    store.apply(JournalEntry.newBuilder().setInode(n).setSequence(++sequence).build());
  }

  private static InodeEntry.Builder folder(long id, long parent, String name) {
    return InodeEntry.newBuilder()
        .setId(id)
        .setParentId(parent)
        .setName(name)
        .setDirectory(true)
        .setComplete(true)
        .setChildrenLoaded(true);
  }

  private static InodeEntry.Builder file(long id, long parent, String name) {
    return InodeEntry.newBuilder()
        .setId(id)
        .setParentId(parent)
        .setName(name)
        .setComplete(true)
        .setLength(id * 100)
        .setBlockSize(1 << 20);
  }

  @Test
  void walksFindInodesByPathAndStopAtTheFirstMissingName() {
    Walk found = tree.walk("/a/b/g");
    assertTrue(found.complete());
    assertEquals(6, found.last().getId());
    assertEquals(5, found.parentOfLast().getId());
    Walk missing = tree.walk("/a/nope/deeper");
    assertFalse(missing.complete());
    assertEquals(1, missing.found(), "stopped below /a");
    assertEquals(2, missing.last().getId());
    assertEquals("/a/b/g", tree.pathOf(6));
    assertEquals(PathNames.ROOT, tree.pathOf(InodeStore.ROOT_ID));
    assertNull(tree.pathOf(99));
  }

  @Test
  void readsOfTheAppliedNamespaceAnswerWithoutTheStoreWhenNeverSynced() throws IOException {
    assertEquals(300, tree.readApplied("/a/f", InodeEntry::getLength));
    StrataException gone =
        assertThrows(StrataException.class, () -> tree.readApplied("/a/gone", n -> n));
    assertEquals(ErrorCode.NOT_FOUND, gone.code());
    assertEquals(
        Optional.of("g"), tree.readIfCurrent("/a/b/g", SyncInterval.NEVER, InodeEntry::getName));
  }

  @Test
  void pagesListAFolderInNameOrderWithoutTheHiddenFolderUnlessAsked() {
    InodeTree.Page page = tree.page(2, "", 100, false, false);
    assertEquals(List.of("b", "f"), page.files().stream().map(FileInfo::getName).toList());
    assertTrue(page.end());
    InodeTree.Page all = tree.page(2, "", 100, false, true);
    assertEquals(
        List.of(PathNames.UPLOADS_FOLDER, "b", "f"),
        all.files().stream().map(FileInfo::getName).toList());
    InodeTree.Page first = tree.page(2, "", 1, false, true);
    assertEquals(PathNames.UPLOADS_FOLDER, first.last(), "where the next page starts");
    assertFalse(first.end());
    InodeTree.Page next = tree.page(2, first.last(), 1, false, true);
    assertEquals(List.of("b"), next.files().stream().map(FileInfo::getName).toList());
    assertEquals("/a/b", next.files().get(0).getPath());
    assertTrue(tree.page(99, "", 10, false, false).files().isEmpty(), "a folder that is gone");
  }

  @Test
  void filesBelowAnInodeAreEachVisitedOnceByTheirDataIds() {
    List<Long> dataIds = new ArrayList<>();
    tree.forEachFileBelow(store.get(2), f -> dataIds.add(InodeTree.dataId(f)));
    dataIds.sort(null);
    assertEquals(List.of(3L, 40L), dataIds);
    assertTrue(tree.isFile(40), "a file is found by the id of its content");
    assertFalse(tree.isFile(6), "not by its own id once its content has another");
    assertFalse(tree.isFile(5), "a folder is no file");
  }

  @Test
  void newIdsAreAboveEveryIdAppliedOrHandedOut() throws IOException {
    long first = tree.newInodeId();
    assertEquals(41, first, "above the data id 40");
    assertEquals(42, tree.newInodeId());
    apply(file(100, 1, "late"));
    assertEquals(101, tree.newInodeId(), "an id applied meanwhile raises the next");
  }

  @Test
  void theClientsViewOfAnInodeCarriesItsPathAndState() {
    FileInfo f = tree.info(store.get(6), "/a/b/g");
    assertEquals("/a/b/g", f.getPath());
    assertEquals("g", f.getName());
    assertEquals(600, f.getLength());
    assertTrue(f.getComplete());
    assertFalse(f.getDirectory());
    assertTrue(tree.info(store.get(2), "/a").getDirectory());
  }
}
