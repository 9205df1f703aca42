package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.proto.FileInfo;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Files written, while processes are killed, through the three ways in: the client ({@code c-<n>}),
 * a FUSE mount ({@code m-<n>}) and the S3 proxy ({@code p-<n>}), all into one folder (the proxy's
 * bucket). Each name's bytes follow from the name, so any file found can be checked, and the
 * manifest holds every write that was acknowledged: close returned, or the PUT answered 200. A
 * write that failed is only counted: its file may or may not be there, but if it is, it must be
 * whole.
 */
final class WriteLoad {
  private final String folder;
  private final Map<String, Integer> acknowledged = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> acks = new ConcurrentHashMap<>();
  private final AtomicInteger failed = new AtomicInteger();
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> threads = new ArrayList<>();

  /**
   * @param folder the namespace folder written into, at the root (the bucket's folder)
   */
  WriteLoad(String folder) {
    this.folder = folder;
  }

  /** The bytes of the file of that name: 1 B to 96 KiB, from the name. */
  static byte[] content(String name) {
    Random r = new Random(name.hashCode());
    byte[] b = new byte[1 + r.nextInt(96 << 10)];
    r.nextBytes(b);
    return b;
  }

  private interface Write {
    void write(String name, byte[] bytes) throws Exception;
  }

  /** Starts the three writers; each stops after 15 minutes or {@link #stop}. */
  void start(FileSystem fs, Path mountPoint, int proxyPort, String accessKey, String secretKey) {
    S3Client s3 =
        S3Client.builder()
            .endpointOverride(URI.create("http://127.0.0.1:" + proxyPort))
            .region(Region.US_EAST_1)
            .forcePathStyle(true)
            .credentialsProvider(
                StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
            .build();
    String bucket = folder.substring(1);
    loop(
        "c",
        (name, bytes) -> {
          try (OutputStream out = fs.createFile(folder + "/" + name)) {
            out.write(bytes);
          }
        },
        null);
    loop("m", (name, bytes) -> Files.write(mountPoint.resolve(bucket).resolve(name), bytes), null);
    loop(
        "p",
        (name, bytes) ->
            s3.putObject(b -> b.bucket(bucket).key(name), RequestBody.fromBytes(bytes)),
        s3);
  }

  private void loop(String prefix, Write write, AutoCloseable resource) {
    acks.put(prefix, new AtomicInteger());
    Thread t =
        new Thread(
            () -> {
              long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(15);
              for (int n = 0; n < 100_000 && !stop.get() && System.nanoTime() < deadline; n++) {
                String name = prefix + "-" + n;
                byte[] bytes = content(name);
                try {
                  write.write(name, bytes);
                  acknowledged.put(name, bytes.length);
                  acks.get(prefix).incrementAndGet();
                  // A steady trickle, not a flood: the two cores also run three masters, two
                  // workers, the proxy, two mounts and the readers.
                  Thread.sleep(50);
                } catch (InterruptedException e) {
                  return;
                } catch (Exception e) {
                  // Expected while a process is down: the write is not acknowledged.
                  failed.incrementAndGet();
                  try {
                    Thread.sleep(200);
                  } catch (InterruptedException ie) {
                    return;
                  }
                }
              }
              if (resource != null) {
                try {
                  resource.close();
                } catch (Exception e) {
                  // The test is ending.
                }
              }
            },
            "write-load-" + prefix);
    t.setDaemon(true);
    threads.add(t);
    t.start();
  }

  /** Waits (bounded) until every writer had {@code count} more writes acknowledged. */
  void awaitProgress(int count, Duration timeout, String after) throws InterruptedException {
    Map<String, Integer> before = new TreeMap<>();
    acks.forEach((k, v) -> before.put(k, v.get()));
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      boolean all = true;
      for (Map.Entry<String, Integer> e : before.entrySet()) {
        all &= acks.get(e.getKey()).get() >= e.getValue() + count;
      }
      if (all) {
        return;
      }
      Map<String, Integer> now = new TreeMap<>();
      acks.forEach((k, v) -> now.put(k, v.get()));
      assertTrue(
          System.nanoTime() < deadline,
          "writers did not go on within "
              + timeout.toSeconds()
              + " s after "
              + after
              + ": "
              + before
              + " -> "
              + now
              + " ("
              + failed.get()
              + " writes failed so far)");
      Thread.sleep(100);
    }
  }

  private static List<String> incomplete(FileSystem fs, String dir) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = fs.listStatus(dir)) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (f.getDirectory()) {
          out.addAll(incomplete(fs, f.getPath()));
        } else if (!f.getComplete()) {
          out.add(f.getPath());
        }
      }
    }
    return out;
  }

  /** Stops the writers and waits for them (bounded). */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(120));
    }
  }

  int acknowledgedCount() {
    return acknowledged.size();
  }

  /**
   * Checks the folder once no file in it is incomplete any more (a dead writer's file goes when its
   * lease lapses; bounded by {@code settle}): every acknowledged write is there exactly once with
   * its bytes, and every other file there is complete and whole.
   */
  void verify(FileSystem fs, Duration settle) throws Exception {
    long deadline = System.nanoTime() + settle.toNanos();
    // The folder and the proxy's own folders in it (staged uploads, versions).
    List<String> being;
    while (!(being = incomplete(fs, folder)).isEmpty()) {
      assertTrue(
          System.nanoTime() < deadline,
          "files still being written "
              + settle.toSeconds()
              + " s after the writers stopped: "
              + being);
      Thread.sleep(500);
    }
    Map<String, FileInfo> listed = new TreeMap<>();
    try (CloseableIterator<FileInfo> it = fs.listStatus(folder)) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (!f.getDirectory()) {
          assertTrue(listed.put(f.getName(), f) == null, "listed twice: " + f.getName());
        }
      }
    }
    for (Map.Entry<String, Integer> a : acknowledged.entrySet()) {
      FileInfo f = listed.get(a.getKey());
      assertTrue(f != null, "acknowledged write " + a.getKey() + " is missing");
      assertEquals((long) a.getValue(), f.getLength(), a.getKey());
    }
    for (FileInfo f : listed.values()) {
      byte[] expected = content(f.getName());
      try (FileInStream in = fs.openFile(f.getPath())) {
        assertArrayEquals(expected, in.readAllBytes(), "bytes of " + f.getPath());
      }
    }
  }
}
