package io.strata.underfs.hdfs;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A real HDFS in the test JVM: one namenode and one datanode, every port chosen by the system on
 * 127.0.0.1, data under a test folder. {@link #fs()} acts as the superuser, the way an outside
 * writer changes files behind Strata's back.
 */
final class MiniHdfs implements AutoCloseable {
  /** A user with no rights on superuser-owned private folders. */
  static final String OTHER_USER = "mallory";

  private final MiniDFSCluster cluster;

  MiniHdfs(Path baseDir) throws IOException {
    Configuration conf = new Configuration();
    conf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    conf.set("dfs.namenode.https-address", "127.0.0.1:0");
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.setInt("dfs.replication", 1);
    // Small files of several blocks exercise reads that cross block boundaries.
    conf.setLong("dfs.namenode.fs-limits.min-block-size", 1024);
    // Resolving the groups of a user unknown to the OS would run a shell per lookup.
    conf.set("hadoop.user.group.static.mapping.overrides", OTHER_USER + "=;");
    cluster = new MiniDFSCluster.Builder(conf, baseDir.toFile()).numDataNodes(1).build();
    cluster.waitActive();
  }

  /** The namenode address, host:port. */
  String namenode() {
    return "127.0.0.1:" + cluster.getNameNodePort();
  }

  /** The store URI of an absolute HDFS path. */
  String uri(String path) {
    return "hdfs://" + namenode() + path;
  }

  DistributedFileSystem fs() throws IOException {
    return cluster.getFileSystem();
  }

  @Override
  public void close() {
    cluster.shutdown();
  }
}
