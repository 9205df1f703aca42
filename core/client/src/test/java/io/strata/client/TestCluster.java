package io.strata.client;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.FileInfo;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.WorkerInfo;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A master double and some worker doubles on 127.0.0.1 with ephemeral ports, an under-store folder
 * in a temporary directory, and clients configured to use them.
 */
final class TestCluster implements AutoCloseable {
  final Path dir;
  final TestMaster master;
  final List<TestWorker> workers = new ArrayList<>();
  final Map<String, byte[]> contents = new ConcurrentHashMap<>();

  /** Every data request any worker received, in arrival order. */
  final List<ReadBlockRequest> requests = new CopyOnWriteArrayList<>();

  private final Server masterServer;
  private final List<FileSystem> clients = new ArrayList<>();

  TestCluster(Path dir, int workerCount) throws Exception {
    this.dir = dir;
    Files.createDirectories(dir.resolve("ufs"));
    master = new TestMaster("file://" + dir.resolve("ufs"));
    masterServer =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(master)
            .build()
            .start();
    List<WorkerInfo> infos = new ArrayList<>();
    for (int i = 1; i <= workerCount; i++) {
      TestWorker w = new TestWorker(i, contents, requests);
      workers.add(w);
      infos.add(w.info());
    }
    master.workers = infos;
  }

  Map<String, String> conf() {
    Map<String, String> c = new HashMap<>();
    c.put("strata.conf.dir", dir.resolve("conf").toString());
    c.put("strata.master.hostname", "127.0.0.1");
    c.put("strata.master.rpc.port", Integer.toString(masterServer.getPort()));
    c.put("strata.client.master.retry.max.duration", "2s");
    c.put("strata.client.short.circuit.enabled", "false");
    c.put("strata.client.data.read.timeout", "20s");
    return c;
  }

  /** A client with the test configuration plus key/value overrides. */
  FileSystem client(String... keyValues) {
    Map<String, String> c = conf();
    for (int i = 0; i < keyValues.length; i += 2) {
      c.put(keyValues[i], keyValues[i + 1]);
    }
    FileSystem fs = FileSystem.connect(StrataConfig.load(c));
    clients.add(fs);
    return fs;
  }

  /** A complete file whose bytes live in the under-store folder (and so in every worker). */
  FileInfo addFile(String path, byte[] content, long blockSize) throws Exception {
    Path local = dir.resolve("ufs").resolve(path.substring(1).replace('/', '_'));
    Files.write(local, content);
    String ufsPath = "file://" + local;
    contents.put(ufsPath, content);
    return master.addFile(path, content.length, blockSize, ufsPath);
  }

  static byte[] randomBytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  @Override
  public void close() throws Exception {
    for (FileSystem fs : clients) {
      fs.close();
    }
    for (TestWorker w : workers) {
      w.close();
    }
    masterServer.shutdownNow().awaitTermination();
  }
}
