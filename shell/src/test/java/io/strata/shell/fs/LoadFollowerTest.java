package io.strata.shell.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.FileSystem;
import io.strata.client.TestLoadMaster;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoadFollowerTest {
  @TempDir Path dir;

  @Test
  void aMasterSilentPastTheLimitFailsNamingItAndTheRunningJob() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    LoadJobStatus running =
        TestLoadMaster.status("/d", LoadJobState.LOAD_RUNNING, 1, 10, 1, 10, 1000);
    try (FileSystem fs =
        FileSystem.connect(
            StrataConfig.load(
                Map.of(
                    "strata.conf.dir",
                    dir.resolve("conf").toString(),
                    "strata.master.hostname",
                    "127.0.0.1",
                    "strata.master.rpc.port",
                    Integer.toString(port),
                    "strata.client.master.retry.max.duration",
                    "100ms")))) {
      LoadFollower follower =
          new LoadFollower(
              fs,
              new StatusLine(err, false, 0, System::nanoTime),
              Duration.ofMillis(50),
              Duration.ofMillis(600));
      StrataException e = assertThrows(StrataException.class, () -> follower.follow("/d", running));
      assertEquals(ErrorCode.UNAVAILABLE, e.code());
      assertEquals(
          "The master at 127.0.0.1:"
              + port
              + " has not answered for 0.6s; the load of"
              + " /d (job 7) keeps running on the master: follow it again with"
              + " `strata fs load --progress /d` once the master is back",
          e.getMessage());
    }
    String text = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(
        text.contains(
            "The master at 127.0.0.1:"
                + port
                + " does not answer; waiting for"
                + " it up to 0.6s (the load keeps running on the master)"),
        text);
  }
}
