package io.strata.bench;

import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.common.conf.ConfigType;
import io.strata.proto.FileInfo;
import io.strata.tests.HdfsServer;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.S3Server;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.RemoteIterator;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;

/**
 * Listing and reading through Strata from S3 (an S3Proxy server) and HDFS (a MiniDFSCluster), each
 * beside the same work done straight against the store with its own client in the same run: listing
 * a folder of many entries (files/s) cold (Strata loads the metadata from the store) and warm (from
 * the master's metastore), and reading a tree of files cold (workers fetch from the store) and warm
 * (from the cache). Usage: {@code bench/run stores [--list 100000] [--files 500] [--file-size
 * 256KB]}.
 */
final class UnderStoreBench {
  private UnderStoreBench() {}

  interface StoreSide {
    void put(String rel, byte[] bytes) throws Exception;

    long listDirect(String rel) throws Exception;

    long readDirect(String rel, byte[] buf) throws Exception;
  }

  static void run(Map<String, String> opts) throws Exception {
    int listCount = Integer.parseInt(opts.getOrDefault("list", "100000"));
    int files = Integer.parseInt(opts.getOrDefault("files", "500"));
    int fileSize = (int) ConfigType.parseBytes(opts.getOrDefault("file-size", "256KB"));
    Path base =
        Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-stores");
    String bucket = "bench";
    try (HdfsServer hdfs = new HdfsServer(base.resolve("hdfs"));
        S3Server s3 = new S3Server(base.resolve("s3"))) {
      s3.createBucket(bucket);
      hdfs.fs().mkdirs(new org.apache.hadoop.fs.Path("/root"));
      StoreSide s3Side =
          new StoreSide() {
            @Override
            public void put(String rel, byte[] bytes) {
              s3.client()
                  .putObject(
                      b -> b.bucket(bucket).key("data/" + rel), RequestBody.fromBytes(bytes));
            }

            @Override
            public long listDirect(String rel) {
              long n = 0;
              for (var page :
                  s3.client()
                      .listObjectsV2Paginator(
                          b -> b.bucket(bucket).prefix("data/" + rel + "/").delimiter("/"))) {
                n += page.contents().size() + page.commonPrefixes().size();
              }
              return n;
            }

            @Override
            public long readDirect(String rel, byte[] buf) throws Exception {
              long n = 0;
              try (ResponseInputStream<GetObjectResponse> in =
                  s3.client().getObject(b -> b.bucket(bucket).key("data/" + rel))) {
                int k;
                while ((k = in.read(buf)) > 0) {
                  n += k;
                }
              }
              return n;
            }
          };
      StoreSide hdfsSide =
          new StoreSide() {
            @Override
            public void put(String rel, byte[] bytes) throws Exception {
              try (FSDataOutputStream out =
                  hdfs.fs().create(new org.apache.hadoop.fs.Path("/root/" + rel), true)) {
                out.write(bytes);
              }
            }

            @Override
            public long listDirect(String rel) throws Exception {
              long n = 0;
              RemoteIterator<org.apache.hadoop.fs.FileStatus> it =
                  hdfs.fs().listStatusIterator(new org.apache.hadoop.fs.Path("/root/" + rel));
              while (it.hasNext()) {
                it.next();
                n++;
              }
              return n;
            }

            @Override
            public long readDirect(String rel, byte[] buf) throws Exception {
              long n = 0;
              try (FSDataInputStream in =
                  hdfs.fs().open(new org.apache.hadoop.fs.Path("/root/" + rel))) {
                int k;
                while ((k = in.read(buf)) > 0) {
                  n += k;
                }
              }
              return n;
            }
          };
      System.err.printf(
          "creating %d entries and %d files of %d bytes in each store%n",
          listCount, files, fileSize);
      fill(s3Side, listCount, files, fileSize);
      fill(hdfsSide, listCount, files, fileSize);

      try (MultiProcessCluster cluster =
              MultiProcessCluster.builder(base.resolve("cluster"))
                  .workers(1)
                  .property("strata.master.root.ufs", hdfs.uri("/root"))
                  .workerProperty(0, "strata.worker.tier.mem.capacity", "1GB")
                  .start();
          FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        fs.mount("/s3", "s3://" + bucket + "/data", s3.mountOptions(), false);
        Table t =
            new Table("store", "measure", "direct", "Strata cold", "ratio", "Strata warm", "ratio");
        measure(t, "S3", s3Side, fs, "/s3", listCount, files, fileSize);
        measure(t, "HDFS", hdfsSide, fs, "", listCount, files, fileSize);
        System.out.printf(
            "Under-store benchmark: list %d entries; read %d files of %s; one"
                + " worker; %d cores. Listing in files/s; reads in MB/s.%n",
            listCount,
            files,
            ReadBench.human(fileSize),
            Runtime.getRuntime().availableProcessors());
        System.out.print(t.render());
      }
    } finally {
      ReadBench.deleteTree(base);
    }
  }

  static void fill(StoreSide side, int listCount, int files, int fileSize) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int first = t;
        done.add(
            pool.submit(
                () -> {
                  for (int i = first; i < listCount; i += 8) {
                    side.put(String.format("many/entry-%06d", i), new byte[0]);
                  }
                  Random random = new Random(first);
                  byte[] bytes = new byte[fileSize];
                  for (int i = first; i < files; i += 8) {
                    random.nextBytes(bytes);
                    side.put(String.format("tree/d%02d/f%05d", i % 20, i), bytes);
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(30, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  static void measure(
      Table t,
      String store,
      StoreSide side,
      FileSystem fs,
      String mount,
      int listCount,
      int files,
      int fileSize)
      throws Exception {
    long start = System.nanoTime();
    long direct = side.listDirect("many");
    double directSec = seconds(start);
    start = System.nanoTime();
    long cold = count(fs, mount + "/many");
    double coldSec = seconds(start);
    start = System.nanoTime();
    long warm = count(fs, mount + "/many");
    double warmSec = seconds(start);
    if (direct != listCount || cold != listCount || warm != listCount) {
      throw new IllegalStateException(
          store + ": listed " + direct + "/" + cold + "/" + warm + " of " + listCount);
    }
    t.row(
        store,
        "list " + listCount,
        Table.f1(listCount / directSec),
        Table.f1(listCount / coldSec),
        Table.f2(directSec / coldSec),
        Table.f1(listCount / warmSec),
        Table.f2(directSec / warmSec));

    byte[] buf = new byte[1 << 20];
    List<String> tree = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      tree.add(String.format("tree/d%02d/f%05d", i % 20, i));
    }
    start = System.nanoTime();
    long bytes = 0;
    for (String rel : tree) {
      bytes += side.readDirect(rel, buf);
    }
    double directRead = seconds(start);
    double coldRead = readTree(fs, mount, tree, buf, bytes);
    for (String rel : tree) {
      ReadBench.waitCached(fs, mount + "/" + rel, fileSize);
    }
    double warmRead = readTree(fs, mount, tree, buf, bytes);
    double mb = bytes / 1e6;
    t.row(
        store,
        "read " + files + " files",
        Table.f1(mb / directRead),
        Table.f1(mb / coldRead),
        Table.f2(directRead / coldRead),
        Table.f1(mb / warmRead),
        Table.f2(directRead / warmRead));
  }

  static long count(FileSystem fs, String path) throws Exception {
    long n = 0;
    try (CloseableIterator<FileInfo> it = fs.listStatus(path)) {
      while (it.hasNext()) {
        it.next();
        n++;
      }
    }
    return n;
  }

  static double readTree(FileSystem fs, String mount, List<String> tree, byte[] buf, long expected)
      throws Exception {
    long start = System.nanoTime();
    long bytes = 0;
    for (String rel : tree) {
      try (InputStream in = fs.openFile(mount + "/" + rel)) {
        int k;
        while ((k = in.read(buf)) > 0) {
          bytes += k;
        }
      }
    }
    if (bytes != expected) {
      throw new IllegalStateException("read " + bytes + " of " + expected + " bytes");
    }
    return seconds(start);
  }

  static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }
}
