package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.strata.common.WorkerHashing;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.ConcatFilesRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.WorkerInfo;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FileSystem.concat against a master double and worker doubles. */
class FileConcatTest {
  @TempDir Path dir;
  private TestCluster cluster;
  private FileSystem fs;
  private byte[] a;
  private byte[] b;
  private List<FileInfo> sources;

  @BeforeEach
  void setUp() throws Exception {
    cluster = new TestCluster(dir, 3);
    fs = cluster.client();
    a = TestCluster.randomBytes(70_000, 1);
    b = TestCluster.randomBytes(33, 2);
    sources =
        List.of(cluster.addFile("/up/00001", a, 1 << 20), cluster.addFile("/up/00002", b, 1 << 20));
  }

  @AfterEach
  void tearDown() throws Exception {
    cluster.close();
  }

  private List<ConcatFilesRequest> concatRequests() {
    return cluster.workers.stream().flatMap(w -> w.concatRequests.stream()).toList();
  }

  @Test
  void theWorkerAWriteWouldUseJoinsTheSourcesAndOneMasterCallCompletesTheFile() throws Exception {
    Map<String, ByteString> xattrs = Map.of("strata.s3.etag", ByteString.copyFromUtf8("e-2"));
    FileInfo done =
        fs.concat(
            "/bucket/key", sources, CreateOptions.defaults().recursive(true).mode(0600), xattrs);

    assertTrue(done.getComplete());
    assertEquals(a.length + b.length, done.getLength());
    CompleteFileRequest completed = cluster.master.completed.get(0);
    assertEquals(done.getFileId(), completed.getFileId());
    assertEquals(a.length + b.length, completed.getLength());
    assertEquals((a.length + b.length) + ":joined", completed.getUfsFingerprint());
    assertEquals(xattrs, completed.getXattrsMap());

    WorkerInfo expected =
        WorkerHashing.pick(done.getFileId(), cluster.master.workers, WorkerInfo::getWorkerId);
    TestWorker chosen =
        cluster.workers.stream()
            .filter(w -> w.id == expected.getWorkerId())
            .findFirst()
            .orElseThrow();
    assertEquals(1, chosen.concatRequests.size());
    assertEquals(1, concatRequests().size(), "one worker joins the files");
    ConcatFilesRequest r = chosen.concatRequests.get(0);
    assertEquals(
        List.of(sources.get(0).getUfsPath(), sources.get(1).getUfsPath()),
        r.getSourceUfsPathsList());
    assertEquals(done.getUfsPath(), r.getUfsPath());
    assertEquals(0600, r.getMode());
    ByteArrayOutputStream joined = new ByteArrayOutputStream();
    joined.writeBytes(a);
    joined.writeBytes(b);
    assertArrayEquals(
        joined.toByteArray(),
        Files.readAllBytes(Path.of(done.getUfsPath().substring("file://".length()))));
    assertTrue(
        cluster.workers.stream().allMatch(w -> w.lastHeader == null),
        "no byte was streamed by the client");
  }

  @Test
  void sourcesOfAnotherMountAreRefusedBeforeAnythingIsCreated() throws Exception {
    fs.mount("/elsewhere", "file://" + dir.resolve("other"), Map.of(), false);
    StrataException e =
        assertThrows(
            StrataException.class,
            () -> fs.concat("/elsewhere/obj", sources, CreateOptions.defaults(), Map.of()));
    assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
    assertTrue(
        e.getMessage().contains("/elsewhere") && e.getMessage().contains("copy the bytes"),
        e.getMessage());
    assertTrue(cluster.master.createRequests.isEmpty());
    assertTrue(concatRequests().isEmpty());
    assertEquals("/elsewhere", fs.mountOf("/elsewhere/obj/below").getPath());
    assertEquals("/", fs.mountOf("/elsewhereish").getPath());
  }

  @Test
  void aFailedJoinOrAChangedSourceLeavesNoFile() throws Exception {
    cluster.workers.forEach(w -> w.failConcat = true);
    StrataException unreachable =
        assertThrows(
            StrataException.class,
            () -> fs.concat("/obj", sources, CreateOptions.defaults(), Map.of()));
    assertEquals(ErrorCode.UNAVAILABLE, unreachable.code());
    assertEquals(List.of("/obj"), cluster.master.deleted);
    assertFalse(cluster.master.has("/obj"));

    cluster.workers.forEach(w -> w.failConcat = false);
    List<FileInfo> stale =
        List.of(sources.get(0), sources.get(1).toBuilder().setLength(b.length + 1).build());
    StrataException changed =
        assertThrows(
            StrataException.class,
            () -> fs.concat("/obj", stale, CreateOptions.defaults(), Map.of()));
    assertEquals(ErrorCode.STALE, changed.code());
    assertFalse(cluster.master.has("/obj"));
    assertTrue(cluster.master.completed.isEmpty());
  }

  @Test
  void directoriesFilesBeingWrittenAndTheTargetItselfAreNoSources() throws Exception {
    FileInfo writing = sources.get(0).toBuilder().setComplete(false).build();
    FileInfo folder = sources.get(0).toBuilder().setDirectory(true).build();
    for (List<FileInfo> bad :
        List.of(List.of(writing), List.of(folder), List.<FileInfo>of(), List.of(sources.get(0)))) {
      StrataException e =
          assertThrows(
              StrataException.class,
              () ->
                  fs.concat("/up/00001", bad, CreateOptions.defaults().overwrite(true), Map.of()));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.code(), e.getMessage());
    }
    assertTrue(cluster.master.createRequests.isEmpty());
    assertTrue(cluster.master.has("/up/00001"));
  }
}
