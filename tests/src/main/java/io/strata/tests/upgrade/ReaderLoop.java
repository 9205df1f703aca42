package io.strata.tests.upgrade;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32;

/**
 * Readers that read whole files over and over while a cluster is upgraded, each read checked
 * against the file's known length and CRC-32, and counted in the phase of the upgrade it ended in:
 * reads, failures (with the first messages), the worst latency. Each reader has its own thread; a
 * reader can be paused (a FUSE mount while it is swapped). Bounded: readers stop at {@link #stop()}
 * or at the deadline given to {@link #start}, whichever comes first.
 */
public final class ReaderLoop implements AutoCloseable {
  /** Reads a whole file by its namespace path. */
  @FunctionalInterface
  public interface Source {
    byte[] read(String path) throws IOException;
  }

  /** A file to read and what its bytes must be. */
  public record Expected(String path, long length, long crc32) {
    public static Expected of(String path, byte[] content) {
      CRC32 crc = new CRC32();
      crc.update(content);
      return new Expected(path, content.length, crc.getValue());
    }
  }

  /** What the readers saw in one phase. */
  public static final class PhaseStats {
    long reads;
    long failures;
    long bytes;
    long worstNanos;
    long startNanos;
    long endNanos;
    final List<String> firstFailures = new ArrayList<>();

    public long reads() {
      return reads;
    }

    public long failures() {
      return failures;
    }

    public double worstLatencyMs() {
      return worstNanos / 1e6;
    }

    public double readsPerSecond() {
      double seconds = Math.max(1, endNanos - startNanos) / 1e9;
      return reads / seconds;
    }

    public double seconds() {
      return Math.max(0, endNanos - startNanos) / 1e9;
    }

    public List<String> firstFailures() {
      return firstFailures;
    }
  }

  private final List<Expected> files;
  private final Map<String, PhaseStats> phases = new LinkedHashMap<>();
  private final List<Thread> threads = new ArrayList<>();
  private final Map<String, AtomicBoolean> paused = new LinkedHashMap<>();
  private final Map<String, AtomicBoolean> idle = new LinkedHashMap<>();
  private volatile boolean stopped;
  private String phase;

  public ReaderLoop(List<Expected> files) {
    this.files = List.copyOf(files);
  }

  /** Adds a reader over {@code source}; call before {@link #start}. */
  public ReaderLoop reader(String name, Source source) {
    paused.put(name, new AtomicBoolean());
    idle.put(name, new AtomicBoolean());
    int offset = threads.size() * 7;
    Thread t = new Thread(() -> run(name, source, offset), "reader-" + name);
    t.setDaemon(true);
    threads.add(t);
    return this;
  }

  /** Starts every reader in phase {@code first}; they stop by themselves after {@code limit}. */
  public void start(String first, java.time.Duration limit) {
    phase(first);
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
            "reader-deadline");
    guard.setDaemon(true);
    guard.start();
    threads.forEach(Thread::start);
  }

  /** Reads from now on count in phase {@code name}. */
  public synchronized void phase(String name) {
    long now = System.nanoTime();
    if (phase != null) {
      phases.get(phase).endNanos = now;
    }
    phase = name;
    PhaseStats s = phases.computeIfAbsent(name, n -> new PhaseStats());
    s.startNanos = now;
  }

  /** Pauses one reader and waits until its read in progress has ended. */
  public void pause(String reader) throws InterruptedException {
    paused.get(reader).set(true);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!idle.get(reader).get() && System.nanoTime() < deadline && !stopped) {
      Thread.sleep(10);
    }
  }

  public void resume(String reader) {
    paused.get(reader).set(false);
  }

  private void run(String name, Source source, int offset) {
    AtomicBoolean pause = paused.get(name);
    AtomicBoolean isIdle = idle.get(name);
    for (long n = offset; !stopped; n++) {
      if (pause.get()) {
        isIdle.set(true);
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        }
        continue;
      }
      isIdle.set(false);
      Expected f = files.get((int) (n % files.size()));
      long start = System.nanoTime();
      String failure = null;
      long length = 0;
      try {
        byte[] got = source.read(f.path());
        length = got.length;
        CRC32 crc = new CRC32();
        crc.update(got);
        if (got.length != f.length() || crc.getValue() != f.crc32()) {
          failure =
              name
                  + " read wrong bytes of "
                  + f.path()
                  + ": "
                  + got.length
                  + " bytes, crc "
                  + crc.getValue()
                  + " (expected "
                  + f.length()
                  + ", "
                  + f.crc32()
                  + ")";
        }
      } catch (IOException | RuntimeException e) {
        failure = name + " failed to read " + f.path() + ": " + e;
      }
      record(System.nanoTime() - start, length, failure);
    }
    isIdle.set(true);
  }

  private synchronized void record(long nanos, long bytes, String failure) {
    PhaseStats s = phases.get(phase);
    s.reads++;
    s.bytes += bytes;
    s.worstNanos = Math.max(s.worstNanos, nanos);
    if (failure != null) {
      s.failures++;
      if (s.firstFailures.size() < 10) {
        s.firstFailures.add(phase + ": " + failure);
      }
    }
  }

  /** Stops the readers and waits for them; ends the last phase. */
  public void stop() throws InterruptedException {
    stopped = true;
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(120));
    }
    synchronized (this) {
      if (phase != null) {
        phases.get(phase).endNanos = System.nanoTime();
      }
    }
  }

  /** Every phase so far, in order. */
  public synchronized Map<String, PhaseStats> phases() {
    return Collections.unmodifiableMap(new LinkedHashMap<>(phases));
  }

  /** Failures over all phases, with the first messages. */
  public synchronized List<String> failures() {
    List<String> out = new ArrayList<>();
    for (PhaseStats s : phases.values()) {
      out.addAll(s.firstFailures);
    }
    return out;
  }

  public synchronized long totalFailures() {
    return phases.values().stream().mapToLong(PhaseStats::failures).sum();
  }

  public synchronized long totalReads() {
    return phases.values().stream().mapToLong(PhaseStats::reads).sum();
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
