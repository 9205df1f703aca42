package io.strata.tests.upgrade;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32;

/**
 * Writers that create, rename and delete small files while a cluster is upgraded, each through its
 * own way in (the client, a FUSE mount), and remember every change they were told is done. A change
 * that failed leaves its file's state unknown: such a file may be found at most once, where it was
 * or where it was going, or not at all. Afterwards {@link #check} compares the files found with
 * what was acknowledged: each acknowledged file exactly once, at its last acknowledged path, with
 * its bytes; every deleted one gone; nothing nobody made. Bounded: writers stop at {@link #stop()},
 * at the deadline given to {@link #start}, or after {@code maxOps} changes each.
 */
public final class WriterLoop {
  /** One way to change files, by path relative to the writers' folder ("a/w1-3"). */
  public interface Target {
    void create(String path, byte[] bytes) throws IOException;

    void rename(String from, String to) throws IOException;

    void delete(String path) throws IOException;
  }

  /** What a writer knows of one of its files. */
  private static final class FileState {
    String path;
    long length;
    long crc;
    boolean uncertain;

    /** Where a failed rename was taking it: the file may be there instead. */
    String maybePath;
  }

  /** Changes acknowledged and failed, per writer. */
  public record Counts(long acknowledged, long failed, List<String> firstFailures) {}

  private static final String[] FOLDERS = {"a", "b"};
  private final int maxOps;
  private final long pauseMillis;
  private final Map<String, Map<String, FileState>> files = new LinkedHashMap<>();
  private final Map<String, long[]> counts = new ConcurrentHashMap<>();
  private final Map<String, List<String>> failures = new ConcurrentHashMap<>();
  private final Map<String, AtomicBoolean> paused = new LinkedHashMap<>();
  private final Map<String, AtomicBoolean> idle = new LinkedHashMap<>();
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stopped;

  /**
   * @param maxOps changes each writer makes at most
   * @param pauseMillis time between a writer's changes (the machine is shared with a cluster)
   */
  public WriterLoop(int maxOps, long pauseMillis) {
    this.maxOps = maxOps;
    this.pauseMillis = pauseMillis;
  }

  /** The folders writers write in, relative to their folder; create them first. */
  public static List<String> folders() {
    return List.of(FOLDERS);
  }

  /** Adds a writer through {@code target}; call before {@link #start}. */
  public WriterLoop writer(String name, Target target) {
    Map<String, FileState> mine = new LinkedHashMap<>();
    files.put(name, mine);
    counts.put(name, new long[2]);
    failures.put(name, java.util.Collections.synchronizedList(new ArrayList<>()));
    paused.put(name, new AtomicBoolean());
    idle.put(name, new AtomicBoolean());
    Thread t = new Thread(() -> run(name, target, mine), "writer-" + name);
    t.setDaemon(true);
    threads.add(t);
    return this;
  }

  /** Starts every writer; they stop by themselves after {@code limit}. */
  public void start(java.time.Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    Thread guard =
        new Thread(
            () -> {
              while (!stopped && System.nanoTime() < deadline) {
                try {
                  Thread.sleep(200);
                } catch (InterruptedException e) {
                  return;
                }
              }
              stopped = true;
            },
            "writer-deadline");
    guard.setDaemon(true);
    guard.start();
    threads.forEach(Thread::start);
  }

  /** Pauses one writer and waits until its change in progress has ended. */
  public void pause(String writer) throws InterruptedException {
    paused.get(writer).set(true);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!idle.get(writer).get() && System.nanoTime() < deadline && !stopped) {
      Thread.sleep(10);
    }
  }

  public void resume(String writer) {
    paused.get(writer).set(false);
  }

  private void run(String name, Target target, Map<String, FileState> mine) {
    Random random = new Random(name.hashCode());
    AtomicBoolean pause = paused.get(name);
    AtomicBoolean isIdle = idle.get(name);
    List<String> live = new ArrayList<>();
    for (int i = 0; i < maxOps && !stopped; ) {
      if (pause.get()) {
        isIdle.set(true);
        sleep(20);
        continue;
      }
      isIdle.set(false);
      int op = live.isEmpty() ? 0 : random.nextInt(10);
      String folder = FOLDERS[random.nextInt(FOLDERS.length)];
      String failure = null;
      if (op < 5) {
        String id = name + "-" + i;
        byte[] bytes = new byte[512 + random.nextInt(4096)];
        random.nextBytes(bytes);
        FileState f = new FileState();
        f.path = folder + "/" + id;
        f.length = bytes.length;
        f.crc = crc(bytes);
        synchronized (mine) {
          mine.put(id, f);
        }
        try {
          target.create(f.path, bytes);
          live.add(id);
        } catch (IOException | RuntimeException e) {
          failure = "create " + f.path + ": " + e;
          f.uncertain = true;
        }
      } else {
        String id = live.get(random.nextInt(live.size()));
        FileState f = mine.get(id);
        try {
          if (op < 8) {
            String to = folder + "/" + id;
            if (!to.equals(f.path)) {
              f.maybePath = to;
              target.rename(f.path, to);
              f.path = to;
              f.maybePath = null;
            }
          } else {
            target.delete(f.path);
            f.path = null;
            live.remove(id);
          }
        } catch (IOException | RuntimeException e) {
          failure = (op < 8 ? "rename " : "delete ") + f.path + ": " + e;
          f.uncertain = true;
          live.remove(id);
        }
      }
      long[] c = counts.get(name);
      synchronized (c) {
        c[failure == null ? 0 : 1]++;
      }
      if (failure != null) {
        List<String> list = failures.get(name);
        if (list.size() < 10) {
          list.add(failure);
        }
      }
      i++;
      sleep(pauseMillis);
    }
    isIdle.set(true);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static long crc(byte[] bytes) {
    CRC32 crc = new CRC32();
    crc.update(bytes);
    return crc.getValue();
  }

  /** Stops the writers and waits for them. */
  public void stop() throws InterruptedException {
    stopped = true;
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(120));
    }
  }

  /** Changes acknowledged and failed by each writer. */
  public Map<String, Counts> counts() {
    Map<String, Counts> out = new LinkedHashMap<>();
    for (Map.Entry<String, long[]> e : counts.entrySet()) {
      out.put(
          e.getKey(),
          new Counts(e.getValue()[0], e.getValue()[1], List.copyOf(failures.get(e.getKey()))));
    }
    return out;
  }

  /** Reads a file found, by path relative to the writers' folder. */
  public interface Reader {
    byte[] read(String path) throws IOException;
  }

  /**
   * The problems of the files found ({@code found}: every file under the writers' folders, by
   * relative path) against what was acknowledged; empty when none. Call after {@link #stop}.
   */
  public List<String> check(List<String> found, Reader reader) throws IOException {
    List<String> problems = new ArrayList<>();
    Map<String, List<String>> byId = new LinkedHashMap<>();
    for (String path : found) {
      byId.computeIfAbsent(path.substring(path.lastIndexOf('/') + 1), k -> new ArrayList<>())
          .add(path);
    }
    for (Map.Entry<String, Map<String, FileState>> w : files.entrySet()) {
      for (Map.Entry<String, FileState> e : w.getValue().entrySet()) {
        String id = e.getKey();
        FileState f = e.getValue();
        List<String> at = byId.remove(id);
        at = at == null ? List.of() : at;
        if (at.size() > 1) {
          problems.add(id + " is there more than once: " + at);
          continue;
        }
        if (f.uncertain) {
          if (at.size() == 1 && !at.get(0).equals(f.path) && !at.get(0).equals(f.maybePath)) {
            problems.add(
                id
                    + " (a change of it failed) is at "
                    + at.get(0)
                    + ", neither "
                    + f.path
                    + " nor "
                    + f.maybePath);
          }
          continue;
        }
        if (f.path == null) {
          if (!at.isEmpty()) {
            problems.add(id + " was deleted (acknowledged) but is at " + at.get(0));
          }
          continue;
        }
        if (!at.equals(List.of(f.path))) {
          problems.add(id + " should be at " + f.path + " (acknowledged) but is at " + at);
          continue;
        }
        byte[] bytes = reader.read(f.path);
        if (bytes.length != f.length || crc(bytes) != f.crc) {
          problems.add(
              id
                  + " at "
                  + f.path
                  + " has "
                  + bytes.length
                  + " bytes, not the "
                  + f.length
                  + " written");
        }
      }
    }
    for (Map.Entry<String, List<String>> e : byId.entrySet()) {
      problems.add("a file nobody made: " + e.getValue());
    }
    return problems;
  }
}
