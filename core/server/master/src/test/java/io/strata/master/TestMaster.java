package io.strata.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.BlockMasterWorkerGrpc;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.function.Executable;

/** A real master in this JVM on ephemeral ports over folders of a test, with real stubs. */
final class TestMaster implements AutoCloseable {
  final Path home;
  final Path ufs;
  final Map<String, String> overrides;
  final MasterServer server;
  final ManagedChannel channel;
  final FileSystemMasterGrpc.FileSystemMasterBlockingStub fs;
  final BlockMasterWorkerGrpc.BlockMasterWorkerBlockingStub blocks;

  private TestMaster(Path home, Map<String, String> extra) throws Exception {
    this.home = home;
    this.ufs = home.resolve("ufs");
    this.overrides = config(home, extra);
    server = new MasterServer(StrataConfig.load(overrides));
    server.start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.rpcPort()).usePlaintext().build();
    fs = FileSystemMasterGrpc.newBlockingStub(channel);
    blocks = BlockMasterWorkerGrpc.newBlockingStub(channel);
  }

  static Map<String, String> config(Path home, Map<String, String> extra) {
    Map<String, String> c = new HashMap<>();
    c.put("strata.home", home.toString());
    c.put("strata.master.rpc.port", "0");
    c.put("strata.master.web.port", "0");
    c.put("strata.master.root.ufs", "file://" + home.resolve("ufs"));
    c.put("strata.master.rpc.threads", "8");
    c.putAll(extra);
    return c;
  }

  static TestMaster start(Path home) throws Exception {
    return new TestMaster(home, Map.of());
  }

  static TestMaster start(Path home, Map<String, String> extra) throws Exception {
    return new TestMaster(home, extra);
  }

  /** Stops without a checkpoint (the journal is replayed on the next start). */
  void crash() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.closeWithoutCheckpoint();
  }

  /** A new master over the same folders and settings. */
  TestMaster restart() throws Exception {
    return new TestMaster(home, overrides);
  }

  /** Closes this master (idempotent) and starts a new one over the same folders. */
  TestMaster restartAfterClose() throws Exception {
    close();
    return new TestMaster(home, overrides);
  }

  @Override
  public void close() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.close();
  }

  // ---- shorthands ----

  FileInfo stat(String path) {
    return fs.getStatus(GetStatusRequest.newBuilder().setPath(path).build()).getFile();
  }

  FileInfo mkdirs(String path) {
    return fs.createDirectory(
            CreateDirectoryRequest.newBuilder()
                .setPath(path)
                .setRecursive(true)
                .setAllowExists(true)
                .build())
        .getDirectory();
  }

  /** Creates a file, writes its bytes to the store as a worker would, and completes it. */
  FileInfo file(String path, long length) throws IOException {
    return file(fs, path, length);
  }

  static FileInfo file(
      FileSystemMasterGrpc.FileSystemMasterBlockingStub fs, String path, long length)
      throws IOException {
    FileInfo created =
        fs.createFile(CreateFileRequest.newBuilder().setPath(path).setRecursive(true).build())
            .getFile();
    Files.write(Path.of(URI.create(created.getUfsPath())), new byte[(int) length]);
    return fs.completeFile(
            CompleteFileRequest.newBuilder()
                .setPath(path)
                .setLength(length)
                .setUfsFingerprint("fp-" + length)
                .build())
        .getFile();
  }

  List<FileInfo> list(String path) {
    List<FileInfo> all = new ArrayList<>();
    Iterator<ListStatusResponse> it =
        fs.listStatus(ListStatusRequest.newBuilder().setPath(path).build());
    while (it.hasNext()) {
      all.addAll(it.next().getFilesList());
    }
    return all;
  }

  List<String> names(String path) {
    List<String> names = new ArrayList<>();
    for (FileInfo f : list(path)) {
      names.add(f.getName());
    }
    return names;
  }

  /** Asserts a call fails with that code and a message containing {@code text}. */
  static void assertFails(Status.Code code, String text, Executable call) {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
    assertEquals(code, e.getStatus().getCode(), e.getStatus().toString());
    assertTrue(
        e.getStatus().getDescription() != null && e.getStatus().getDescription().contains(text),
        "message '" + e.getStatus().getDescription() + "' should contain '" + text + "'");
  }
}
