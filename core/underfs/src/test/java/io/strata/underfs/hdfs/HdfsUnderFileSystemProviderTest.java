package io.strata.underfs.hdfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderStores;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opening HDFS stores: option parsing, the Hadoop configuration a mount gets, and a namenode that
 * is not there. No HDFS runs here; opening a store makes no namenode call.
 */
class HdfsUnderFileSystemProviderTest {
  private static final Logger LOG = LoggerFactory.getLogger(HdfsUnderFileSystemProviderTest.class);

  @TempDir Path dir;
  static String closedNamenode;

  /** A port nothing listens on: bound by the system, then released. */
  @BeforeAll
  static void findClosedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      closedNamenode = "127.0.0.1:" + socket.getLocalPort();
    }
  }

  static HdfsUnderFileSystem open(Map<String, String> options) throws IOException {
    return HdfsUnderFileSystem.open(
        "hdfs://" + closedNamenode + "/data", HdfsOptions.parse(options));
  }

  @Test
  void theProviderIsFoundByTheHdfsScheme() throws Exception {
    try (UnderStores stores = new UnderStores()) {
      UnderFileSystem ufs = stores.get("hdfs://" + closedNamenode + "/a b/c", Map.of());
      assertInstanceOf(HdfsUnderFileSystem.class, ufs);
      assertEquals("hdfs", ufs.scheme());
    }
  }

  @Test
  void anUnknownOptionFailsNamingItAndTheValidOnes() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new HdfsUnderFileSystemProvider()
                    .open("hdfs://" + closedNamenode + "/", Map.of("hdfs.usr", "alice")));
    assertTrue(e.getMessage().contains("'hdfs.usr'"), e.getMessage());
    for (String valid : new String[] {"hdfs.config.files", "hdfs.conf.<key>", "hdfs.user"}) {
      assertTrue(e.getMessage().contains(valid), e.getMessage());
    }
    assertThrows(
        IllegalArgumentException.class,
        () -> HdfsOptions.parse(Map.of("hdfs.conf.", "x")),
        "a pass-through needs a Hadoop key");
    IllegalArgumentException blank =
        assertThrows(
            IllegalArgumentException.class, () -> HdfsOptions.parse(Map.of(HdfsOptions.USER, " ")));
    assertTrue(blank.getMessage().contains(HdfsOptions.USER), blank.getMessage());
  }

  @Test
  void kerberosOptionsAreReservedAndRefusedClearly() {
    for (String name : new String[] {HdfsOptions.KERBEROS_PRINCIPAL, HdfsOptions.KERBEROS_KEYTAB}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> HdfsOptions.parse(Map.of(name, "x")));
      assertTrue(e.getMessage().startsWith("Kerberos is not supported yet"), e.getMessage());
      assertTrue(e.getMessage().contains(name), e.getMessage());
    }
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                HdfsOptions.parse(Map.of("hdfs.conf.hadoop.security.authentication", "kerberos")));
    assertTrue(e.getMessage().startsWith("Kerberos is not supported yet"), e.getMessage());
  }

  @Test
  void hadoopConfPassThroughReachesTheConfiguration() throws Exception {
    try (HdfsUnderFileSystem ufs =
        open(
            Map.of(
                "hdfs.conf.dfs.client.use.datanode.hostname", "true",
                "hdfs.conf.ipc.client.connect.timeout", "1234",
                "hdfs.conf.strata.test.custom", "a value, with a comma"))) {
      Configuration conf = ufs.configuration();
      assertEquals("true", conf.get("dfs.client.use.datanode.hostname"));
      assertEquals("a value, with a comma", conf.get("strata.test.custom"));
      assertEquals("1234", conf.get("ipc.client.connect.timeout"), "the option beats the default");
      assertEquals(
          "2",
          conf.get("ipc.client.connect.max.retries.on.timeouts"),
          "Strata's short retries apply where the mount says nothing");
    }
  }

  @Test
  void configFilesLoadInOrderAndPassThroughWins() throws Exception {
    Path core = dir.resolve("core-site.xml");
    Path hdfsSite = dir.resolve("hdfs site.xml");
    Files.writeString(
        core,
        site(
            Map.of(
                "strata.test.a",
                "core",
                "strata.test.b",
                "core",
                "ipc.client.connect.max.retries",
                "7")));
    Files.writeString(hdfsSite, site(Map.of("strata.test.b", "hdfs", "strata.test.c", "hdfs")));
    try (HdfsUnderFileSystem ufs =
        open(
            Map.of(
                HdfsOptions.CONFIG_FILES,
                core + ", " + hdfsSite,
                "hdfs.conf.strata.test.c",
                "option"))) {
      Configuration conf = ufs.configuration();
      assertEquals("core", conf.get("strata.test.a"));
      assertEquals("hdfs", conf.get("strata.test.b"), "later files win");
      assertEquals("option", conf.get("strata.test.c"), "hdfs.conf.* wins over files");
      assertEquals(
          "7",
          conf.get("ipc.client.connect.max.retries"),
          "a config file's value beats Strata's default");
      assertEquals("5000", conf.get("ipc.client.connect.timeout"));
    }
    IllegalArgumentException missing =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                HdfsOptions.parse(
                    Map.of(HdfsOptions.CONFIG_FILES, dir.resolve("nope.xml").toString())));
    assertTrue(missing.getMessage().contains(HdfsOptions.CONFIG_FILES), missing.getMessage());
    assertTrue(missing.getMessage().contains("nope.xml"), missing.getMessage());
    Path broken = dir.resolve("broken.xml");
    Files.writeString(broken, "<configuration><property>");
    IllegalArgumentException malformed =
        assertThrows(
            IllegalArgumentException.class,
            () -> HdfsOptions.parse(Map.of(HdfsOptions.CONFIG_FILES, broken.toString())));
    assertTrue(malformed.getMessage().contains("broken.xml"), malformed.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> HdfsOptions.parse(Map.of(HdfsOptions.CONFIG_FILES, "conf/core-site.xml")),
        "relative paths depend on where the master runs");
  }

  static String site(Map<String, String> properties) {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
    properties.forEach(
        (k, v) ->
            xml.append("  <property><name>")
                .append(k)
                .append("</name><value>")
                .append(v)
                .append("</value></property>\n"));
    return xml.append("</configuration>\n").toString();
  }

  @Test
  void aUriWithoutANamenodeIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new HdfsUnderFileSystemProvider().open("hdfs:///data", Map.of()));
    assertTrue(e.getMessage().contains("hdfs:///data"), e.getMessage());
  }

  @Test
  void anUnreachableNamenodeFailsWithUnavailableWithinTheBound() throws Exception {
    try (HdfsUnderFileSystem ufs = open(Map.of())) {
      Configuration conf = ufs.configuration();
      // The worst case the client waits: every connection attempt timing out, or every
      // attempt refused and retried after the retry interval.
      long timeouts =
          conf.getLong("ipc.client.connect.timeout", 0)
              * (1 + conf.getLong("ipc.client.connect.max.retries.on.timeouts", 0));
      long refusals =
          conf.getLong("ipc.client.connect.retry.interval", 0)
              * (1 + conf.getLong("ipc.client.connect.max.retries", 0));
      assertTrue(timeouts <= 20_000 && refusals <= 20_000, timeouts + " / " + refusals);

      long start = System.nanoTime();
      StrataException e =
          assertThrows(
              StrataException.class, () -> ufs.getStatus("hdfs://" + closedNamenode + "/data/x"));
      LOG.info(
          "A closed namenode port failed after {} ms", (System.nanoTime() - start) / 1_000_000);
      assertEquals(ErrorCode.UNAVAILABLE, e.code());
      assertTrue(
          e.getMessage()
              .startsWith(
                  "Cannot reach the HDFS namenode at "
                      + closedNamenode
                      + ": check the mount URI and that HDFS is running"),
          e.getMessage());
      assertTrue(e.getMessage().contains("hdfs://" + closedNamenode + "/data/x"), e.getMessage());
      assertEquals(
          ErrorCode.UNAVAILABLE,
          assertThrows(
                  StrataException.class,
                  () -> ufs.read("hdfs://" + closedNamenode + "/data/x", 0, new byte[1], 0, 1))
              .code());
      assertEquals(
          ErrorCode.UNAVAILABLE,
          assertThrows(StrataException.class, () -> ufs.list("hdfs://" + closedNamenode + "/data"))
              .code());
    }
  }

  @Test
  void anUnresolvableNamenodeHostFailsWithUnavailable() {
    // The .invalid domain never resolves (RFC 6761).
    String namenode = "no-such-namenode.invalid:8020";
    StrataException e =
        assertThrows(
            StrataException.class,
            () -> {
              try (HdfsUnderFileSystem ufs =
                  HdfsUnderFileSystem.open(
                      "hdfs://" + namenode + "/", HdfsOptions.parse(Map.of()))) {
                ufs.getStatus("hdfs://" + namenode + "/x");
              }
            });
    assertEquals(ErrorCode.UNAVAILABLE, e.code());
    assertTrue(
        e.getMessage().startsWith("Cannot reach the HDFS namenode at " + namenode), e.getMessage());
  }

  /**
   * A namenode whose accept queue is full never completes a connection, as when it hangs; the
   * client gives up after its connect timeouts. Shortened here from Strata's 3 x 5 s.
   */
  @Test
  void aNamenodeThatNeverAcceptsFailsWithUnavailable() throws Exception {
    try (ServerSocket hung = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      List<Socket> queued = new ArrayList<>();
      boolean full = false;
      try {
        for (int i = 0; i < 10 && !full; i++) {
          Socket s = new Socket();
          queued.add(s);
          try {
            s.connect(new InetSocketAddress("127.0.0.1", hung.getLocalPort()), 500);
          } catch (SocketTimeoutException e) {
            full = true;
          }
        }
        assertTrue(full, "the accept queue of the silent server filled up");
        String namenode = "127.0.0.1:" + hung.getLocalPort();
        try (HdfsUnderFileSystem ufs =
            HdfsUnderFileSystem.open(
                "hdfs://" + namenode + "/",
                HdfsOptions.parse(
                    Map.of(
                        "hdfs.conf.ipc.client.connect.timeout",
                        "1000",
                        "hdfs.conf.ipc.client.rpc-timeout.ms",
                        "5000")))) {
          StrataException e =
              assertThrows(StrataException.class, () -> ufs.exists("hdfs://" + namenode + "/x"));
          assertEquals(ErrorCode.UNAVAILABLE, e.code());
          assertTrue(
              e.getMessage().startsWith("Cannot reach the HDFS namenode at " + namenode),
              e.getMessage());
        }
      } finally {
        for (Socket s : queued) {
          s.close();
        }
      }
    }
  }

  @Test
  void pathsOfAnotherNamenodeAreRefused() throws Exception {
    try (HdfsUnderFileSystem ufs = open(Map.of())) {
      assertThrows(IllegalArgumentException.class, () -> ufs.getStatus("hdfs://elsewhere:8020/x"));
      assertThrows(
          IllegalArgumentException.class, () -> ufs.getStatus("hdfs://" + closedNamenode + "0/x"));
      assertEquals(
          "/a b/c#d/100%",
          ufs.toPath("hdfs://" + closedNamenode + "/a b//c#d/100%/").toUri().getPath());
    }
  }
}
