package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.client.NamespaceWatch;
import io.strata.client.master.MasterClient;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.NamespaceChange;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many clients creating, renaming and deleting files and folders at once in the same folders, on
 * one master and on three (whose leader is killed in the middle of the run): every change a client
 * was told is done is there exactly once, nothing else is; the change stream hands out changes in
 * journal order; and the namespace the masters built while serving equals the one a serial replay
 * of their journal builds (every master killed and started again, replaying the whole log, with no
 * snapshot to start from).
 */
class ConcurrentChangesTest {
  private static final int THREADS = 8;
  private static final int OPS_PER_THREAD = 150;
  private static final int FOLDERS = 4;
  @TempDir Path dir;

  @Test
  void concurrentChangesOnOneMasterAreEachAppliedOnceInJournalOrder() throws Exception {
    run(1, false);
  }

  @Test
  void concurrentChangesOnThreeMastersSurviveTheLeadersDeath() throws Exception {
    run(3, true);
  }

  /** What one client thread did to one of its names. */
  private static final class Name {
    final boolean directory;

    /** Where it is now, null once deleted. */
    String path;

    /** An answer was lost (fail-over): where it is, or whether it is, is not known. */
    boolean uncertain;

    Name(boolean directory, String path) {
      this.directory = directory;
      this.path = path;
    }
  }

  private void run(int masters, boolean killLeader) throws Exception {
    try (MultiProcessCluster cluster =
            MultiProcessCluster.builder(dir.resolve("c" + masters))
                .masters(masters)
                .workers(0)
                // No snapshot: starting again replays the whole journal.
                .property("strata.master.journal.checkpoint.entries", "100000000")
                .property("strata.master.journal.checkpoint.period", "0")
                .start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig());
        MasterClient master = new MasterClient(cluster.clientConfig())) {
      for (int f = 0; f < FOLDERS; f++) {
        fs.createDirectory("/w/d" + f, true, true);
      }
      List<NamespaceChange> seen = new ArrayList<>();
      AtomicInteger resets = new AtomicInteger();
      NamespaceWatch watch =
          fs.watchChanges(
              new NamespaceWatch.Listener() {
                @Override
                public void connected(boolean reset) {
                  if (reset) {
                    synchronized (seen) {
                      resets.incrementAndGet();
                      seen.add(null);
                    }
                  }
                }

                @Override
                public void changed(List<NamespaceChange> changes) {
                  synchronized (seen) {
                    seen.addAll(changes);
                  }
                }

                @Override
                public void disconnected(String reason) {}
              });
      MultiProcessCluster.waitFor(
          "the change stream", Duration.ofSeconds(30), watch::connected, null);

      Map<String, Name> names = new ConcurrentHashMap<>();
      AtomicInteger done = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
      List<Future<?>> work = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        work.add(
            pool.submit(
                () -> {
                  clientThread(fs, master, thread, names, done);
                  return null;
                }));
      }
      if (killLeader) {
        work.add(
            pool.submit(
                () -> {
                  MultiProcessCluster.waitFor(
                      "half the changes",
                      Duration.ofSeconds(120),
                      () -> done.get() >= THREADS * OPS_PER_THREAD / 2,
                      null);
                  int leader = cluster.leaderIndex();
                  cluster.killMaster(leader);
                  cluster.startMaster();
                  return null;
                }));
      }
      for (Future<?> f : work) {
        f.get(10, TimeUnit.MINUTES);
      }
      pool.shutdown();

      Map<String, String> live = namespace(fs);
      checkAgainstModel(live, names);
      long end = fs.masterInfo().journalSequence();
      MultiProcessCluster.waitFor(
          "the change stream to catch up",
          Duration.ofSeconds(30),
          () -> watch.lastSequence() >= end,
          null);
      watch.close();
      checkJournalOrder(seen, killLeader);

      // A serial replay of the journal: every master killed and started again with no
      // snapshot, so each applies the whole log one entry after another.
      cluster.killMaster();
      cluster.startMaster();
      MultiProcessCluster.waitFor(
          "a master that serves",
          Duration.ofSeconds(60),
          () -> {
            try {
              fs.getStatus("/w");
              return true;
            } catch (StrataException e) {
              return false;
            }
          },
          null);
      assertEquals(live, namespace(fs), "the journal replayed makes another namespace");
    }
  }

  private static void clientThread(
      FileSystem fs, MasterClient master, int thread, Map<String, Name> names, AtomicInteger done)
      throws java.io.IOException {
    Random random = new Random(thread);
    List<String> mine = new ArrayList<>();
    for (int i = 0; i < OPS_PER_THREAD; i++, done.incrementAndGet()) {
      int op = mine.isEmpty() ? 0 : random.nextInt(10);
      String folder = "/w/d" + random.nextInt(FOLDERS);
      try {
        if (op < 5) {
          String name = "t" + thread + "-" + i;
          boolean directory = random.nextInt(4) == 0;
          Name n = new Name(directory, folder + "/" + name);
          names.put(name, n);
          mine.add(name);
          try {
            if (directory) {
              fs.createDirectory(n.path, false, false);
            } else {
              FileInfo made =
                  master
                      .call(
                          s -> s.createFile(CreateFileRequest.newBuilder().setPath(n.path).build()))
                      .getFile();
              long id = made.getFileId();
              // The (empty) bytes land in the local under store as a worker writes them.
              java.nio.file.Files.write(
                  Path.of(java.net.URI.create(made.getUfsPath())), new byte[0]);
              master.call(
                  s ->
                      s.completeFile(
                          CompleteFileRequest.newBuilder()
                              .setPath(n.path)
                              .setFileId(id)
                              .setLength(0)
                              .build()));
            }
          } catch (StrataException e) {
            uncertainOrFail(n, e);
          }
        } else {
          String name = mine.get(random.nextInt(mine.size()));
          Name n = names.get(name);
          if (n.uncertain || n.path == null) {
            continue;
          }
          try {
            if (op < 8) {
              String to = folder + "/" + name;
              if (!to.equals(n.path)) {
                fs.rename(n.path, to);
                n.path = to;
              }
            } else {
              fs.delete(n.path, true);
              n.path = null;
            }
          } catch (StrataException e) {
            uncertainOrFail(n, e);
          }
        }
      } catch (RuntimeException e) {
        throw new AssertionError("thread " + thread + " op " + i + ": " + e, e);
      }
    }
  }

  /** A lost answer (the leader died with it) leaves the outcome unknown; anything else fails. */
  private static void uncertainOrFail(Name n, StrataException e) throws StrataException {
    if (e.code() == ErrorCode.UNAVAILABLE || e.code() == ErrorCode.DEADLINE_EXCEEDED) {
      n.uncertain = true;
      return;
    }
    throw e;
  }

  /** Every path under /w with what identifies its inode and its state. */
  private static Map<String, String> namespace(FileSystem fs) throws StrataException {
    Map<String, String> out = new TreeMap<>();
    List<String> pending = new ArrayList<>(List.of("/w"));
    while (!pending.isEmpty()) {
      String d = pending.remove(pending.size() - 1);
      try (CloseableIterator<FileInfo> it = fs.listStatus(d)) {
        while (it.hasNext()) {
          FileInfo f = it.next();
          out.put(
              f.getPath(),
              f.getInodeNumber()
                  + (f.getDirectory() ? " dir" : " file")
                  + " len "
                  + f.getLength()
                  + " complete "
                  + f.getComplete()
                  + " mode "
                  + Integer.toOctalString(f.getMode())
                  + " mtime "
                  + f.getModificationTimeNs());
          if (f.getDirectory()) {
            pending.add(f.getPath());
          }
        }
      }
    }
    return out;
  }

  private static void checkAgainstModel(Map<String, String> live, Map<String, Name> names) {
    Map<String, List<String>> byName = new HashMap<>();
    for (String path : live.keySet()) {
      String name = path.substring(path.lastIndexOf('/') + 1);
      if (!name.startsWith("d") || !path.matches("/w/d\\d+")) {
        byName.computeIfAbsent(name, k -> new ArrayList<>()).add(path);
      }
    }
    int checked = 0;
    for (Map.Entry<String, Name> e : names.entrySet()) {
      List<String> at = byName.getOrDefault(e.getKey(), List.of());
      Name n = e.getValue();
      assertTrue(at.size() <= 1, e.getKey() + " is there more than once: " + at);
      if (n.uncertain) {
        continue;
      }
      checked++;
      if (n.path == null) {
        assertTrue(at.isEmpty(), e.getKey() + " was deleted but is at " + at);
      } else {
        assertEquals(List.of(n.path), at, e.getKey() + " is not where the last change put it");
        assertTrue(live.get(n.path).contains(n.directory ? " dir" : " file"), live.get(n.path));
      }
    }
    Set<String> known = names.keySet();
    for (String name : byName.keySet()) {
      assertTrue(known.contains(name), "a name nobody made: " + name + " at " + byName.get(name));
    }
    assertTrue(checked > names.size() / 2, "too few names with a known outcome: " + checked);
    System.out.printf(
        "%d names made, %d with an outcome lost in a fail-over, %d paths%n",
        names.size(), names.size() - checked, live.size());
  }

  /** Sequences never go down, resets come only with a fail-over, and the changes came. */
  private static void checkJournalOrder(List<NamespaceChange> seen, boolean failover) {
    long last = 0;
    int changes = 0;
    synchronized (seen) {
      for (NamespaceChange c : seen) {
        if (c == null) {
          assertTrue(failover, "the change stream reset without a fail-over");
          continue;
        }
        // One entry may name two paths (a rename's both ends): equal sequences, never lower.
        assertTrue(
            c.getSequence() >= last,
            "change " + c.getPath() + " at sequence " + c.getSequence() + " after " + last);
        last = c.getSequence();
        changes++;
      }
    }
    assertTrue(changes >= THREADS * OPS_PER_THREAD / 2, "only " + changes + " changes streamed");
  }
}
