package io.strata.tests;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A real HDFS for end-to-end tests and benchmarks: Hadoop's MiniDFSCluster in this JVM, one
 * namenode and one datanode on 127.0.0.1 with ports chosen by the system. Strata's processes reach
 * it over loopback like any namenode; {@link #fs()} changes files behind Strata's back.
 */
public final class HdfsServer implements AutoCloseable {
  private final MiniDFSCluster cluster;

  public HdfsServer(Path baseDir) throws IOException {
    Configuration conf = new Configuration();
    conf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    conf.set("dfs.namenode.https-address", "127.0.0.1:0");
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.setInt("dfs.replication", 1);
    cluster = new MiniDFSCluster.Builder(conf, baseDir.toFile()).numDataNodes(1).build();
    cluster.waitActive();
  }

  /** The namenode address, host:port. */
  public String namenode() {
    return "127.0.0.1:" + cluster.getNameNodePort();
  }

  /** The store URI of an absolute HDFS path. */
  public String uri(String path) {
    return "hdfs://" + namenode() + path;
  }

  public DistributedFileSystem fs() throws IOException {
    return cluster.getFileSystem();
  }

  @Override
  public void close() {
    cluster.shutdown();
  }
}
