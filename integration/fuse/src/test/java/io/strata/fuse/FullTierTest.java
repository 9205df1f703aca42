package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.FileSystem;
import io.strata.client.testing.Tmpfs;
import io.strata.common.conf.StrataConfig;
import io.strata.tests.MultiProcessCluster;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker whose cache tier sits on a small real disk (a 4 MiB tmpfs under a tier configured for 64
 * MB), written through a FUSE mount with files kept in the cache only (MUST_CACHE), so that nothing
 * can be evicted: once the disk is full a close fails with "No space left on device", the files
 * written before stay readable with their bytes, and once a file is removed the space returns and
 * the write succeeds.
 */
class FullTierTest {
  private static final int FILE = 768 << 10;

  @TempDir Path dir;

  @Test
  void aFullCacheDiskRefusesACloseWithEnospcAndTakesWritesAgainWhenSpaceReturns() throws Exception {
    Path ssd = Files.createDirectories(dir.resolve("ssd"));
    Tmpfs.mount(ssd, "4m");
    FuseMount mount = null;
    try (MultiProcessCluster cluster =
            MultiProcessCluster.builder(dir.resolve("cluster"))
                .workers(1)
                .property("strata.master.file.block.size", "1MB")
                .workerProperty(0, "strata.worker.tier.mem.capacity", "0")
                .workerProperty(0, "strata.worker.tier.ssd.dir", ssd.toString())
                .workerProperty(0, "strata.worker.tier.ssd.capacity", "64MB")
                .start();
        FileSystem fs =
            FileSystem.connect(
                cluster.clientConfig(Map.of("strata.user.file.write.type", "MUST_CACHE")))) {
      StrataConfig conf = StrataConfig.load(Map.of());
      mount =
          FuseMount.mount(
              StrataFuseFileSystem.create(
                  fs, "/", conf, new io.micrometer.core.instrument.simple.SimpleMeterRegistry()),
              Files.createDirectories(dir.resolve("mnt")),
              MountOptions.withDefaults(List.of(), conf),
              Duration.ofSeconds(30));
      Path folder = Files.createDirectories(mount.mountPoint().resolve("held"));
      List<Path> written = new ArrayList<>();
      IOException full = null;
      // The disk holds five such files at most: bounded by count.
      for (int i = 0; i < 10 && full == null; i++) {
        Path file = folder.resolve("f" + i);
        try {
          Files.write(file, content(i));
          written.add(file);
        } catch (IOException e) {
          full = e;
        }
      }
      assertNotNull(full, "a disk of 4 MiB took " + written.size() + " files of 768 KiB");
      assertTrue(
          String.valueOf(full.getMessage()).contains("No space left on device"),
          "the close names the full disk: " + full);
      assertTrue(written.size() >= 2, "files written before the disk filled: " + written.size());
      // Reads go on, through the mount and the client.
      for (int i = 0; i < written.size(); i++) {
        assertArrayEquals(content(i), Files.readAllBytes(written.get(i)));
        try (InputStream in = fs.openFile("/held/f" + i)) {
          assertArrayEquals(content(i), in.readAllBytes());
        }
      }
      // The file whose close failed shows nothing half-written: until its last handle goes the
      // mount keeps the bytes it was given, and then the name goes with them (the bytes are kept
      // in the staging folder, named in the log); the kernel's release comes after close(2)
      // returns, so either may be seen here.
      Path refused = folder.resolve("f" + written.size());
      try {
        byte[] kept = Files.readAllBytes(refused);
        assertTrue(
            kept.length == 0 || Arrays.equals(content(written.size()), kept),
            "the refused file holds " + kept.length + " bytes that are not what was written");
      } catch (java.nio.file.NoSuchFileException gone) {
        // Released and dropped.
      }
      MultiProcessCluster.waitFor(
          "the refused file's name to go with its last handle",
          Duration.ofSeconds(30),
          () -> !Files.exists(refused),
          null);
      // Space returns when a file goes; the next write succeeds.
      Files.delete(written.get(0));
      int next = written.size();
      Path again = folder.resolve("f" + next);
      MultiProcessCluster.waitFor(
          "a write once a file was removed",
          Duration.ofSeconds(30),
          () -> {
            try {
              Files.write(again, content(next));
              return true;
            } catch (IOException e) {
              return false;
            }
          },
          null);
      assertArrayEquals(content(next), Files.readAllBytes(again));
      for (int i = 1; i < written.size(); i++) {
        assertArrayEquals(content(i), Files.readAllBytes(written.get(i)), "f" + i + " kept");
      }
    } finally {
      if (mount != null) {
        mount.close();
        if (FuseMount.isMounted(mount.mountPoint())) {
          FuseMount.lazyUnmount(mount.mountPoint());
        }
      }
      Tmpfs.unmount(ssd);
    }
  }

  private static byte[] content(int seed) {
    byte[] bytes = new byte[FILE];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }
}
