package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.LoadMetadataProgress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the client sends for each sync option, and the metadata load's progress stream. */
class SyncOptionTest {
  @TempDir Path dir;
  private TestCluster cluster;
  private FileSystem fs;

  @BeforeEach
  void setUp() throws Exception {
    cluster = new TestCluster(dir, 1);
    fs = cluster.client();
  }

  @AfterEach
  void tearDown() throws Exception {
    cluster.close();
  }

  @Test
  void statusCallsCarryTheIntervalOnlyWhenOneIsGiven() throws Exception {
    cluster.master.addFile("/f", 10, 1024, "file:///x/f");
    fs.getStatus("/f");
    fs.getStatus("/f", SyncOption.ALWAYS);
    fs.getStatus("/f", SyncOption.NEVER);
    fs.getStatus("/f", SyncOption.every(Duration.ofSeconds(30)));
    var sent = cluster.master.statusRequests;
    assertFalse(sent.get(0).hasSyncIntervalMs());
    assertEquals(0, sent.get(1).getSyncIntervalMs());
    assertTrue(sent.get(1).hasSyncIntervalMs());
    assertEquals(-1, sent.get(2).getSyncIntervalMs());
    assertEquals(30_000, sent.get(3).getSyncIntervalMs());
    assertThrows(IllegalArgumentException.class, () -> SyncOption.every(Duration.ZERO));
  }

  @Test
  void listingSyncsOnItsFirstRequestOnly() throws Exception {
    fs.createDirectory("/d", false, false);
    for (int i = 0; i < 150; i++) {
      cluster.master.addFile(String.format("/d/f%03d", i), i, 1024, "file:///x/" + i);
    }
    List<String> names = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = fs.listStatus("/d", SyncOption.ALWAYS)) {
      it.forEachRemaining(f -> names.add(f.getName()));
    }
    assertEquals(150, names.size());
    ListStatusRequest first = cluster.master.listRequests.get(0);
    assertTrue(first.hasSyncIntervalMs());
    assertEquals(0, first.getSyncIntervalMs());
    try (CloseableIterator<FileInfo> it = fs.listStatus("/d")) {
      assertTrue(it.hasNext());
    }
    assertFalse(cluster.master.listRequests.get(1).hasSyncIntervalMs());
  }

  @Test
  void metadataLoadStreamsProgressUntilDone() throws Exception {
    fs.createDirectory("/t/a", true, false);
    cluster.master.addFile("/t/a/x", 100, 1024, "file:///x/x");
    cluster.master.addFile("/t/y", 20, 1024, "file:///x/y");
    List<LoadMetadataProgress> all = new ArrayList<>();
    try (CloseableIterator<LoadMetadataProgress> it = fs.loadMetadata("//t/", SyncOption.ALWAYS)) {
      it.forEachRemaining(all::add);
    }
    assertEquals(2, all.size());
    assertFalse(all.get(0).getDone());
    LoadMetadataProgress done = all.get(1);
    assertTrue(done.getDone());
    assertEquals(2, done.getFiles());
    assertEquals(2, done.getDirectories());
    assertEquals(120, done.getBytes());
    assertEquals("/t", cluster.master.loadRequests.get(0).getPath());
    assertEquals(0, cluster.master.loadRequests.get(0).getSyncIntervalMs());

    StrataException e =
        assertThrows(StrataException.class, () -> fs.loadMetadata("/none", SyncOption.DEFAULT));
    assertEquals(ErrorCode.NOT_FOUND, e.code());
    assertFalse(cluster.master.loadRequests.get(1).hasSyncIntervalMs());
  }
}
