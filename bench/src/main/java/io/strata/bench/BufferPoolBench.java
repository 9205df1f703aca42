package io.strata.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.buffer.AlignedBufferPool;
import io.strata.common.buffer.BufferPoolSettings;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Cost of getting a direct buffer from an {@link AlignedBufferPool} and giving it back, against
 * {@code ByteBuffer.allocateDirect} of the same size with the JDK freeing it at some later garbage
 * collection, for 64 KiB and 4 MiB buffers. Each operation touches the first and last byte so that
 * neither side can skip the memory. Usage: {@code bench/run buffer-pool}; JMH runs one fork, 2
 * warm-up and 3 measured iterations of 1 s per case.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BufferPoolBench {
  @Param({"65536", "4194304"})
  public int size;

  private AlignedBufferPool pool;

  @Setup(Level.Trial)
  public void openPool() {
    pool =
        new AlignedBufferPool(
            BufferPoolSettings.of(256L << 20, 4), new SimpleMeterRegistry(), "bench.buffer.pool");
  }

  @TearDown(Level.Trial)
  public void closePool() {
    pool.close();
  }

  @Benchmark
  public byte poolAcquireRelease() {
    ByteBuffer b = pool.acquire(size);
    b.put(0, (byte) 1).put(size - 1, (byte) 2);
    byte seen = b.get(size - 1);
    pool.release(b);
    return seen;
  }

  @Benchmark
  public byte allocateDirect() {
    ByteBuffer b = ByteBuffer.allocateDirect(size);
    b.put(0, (byte) 1).put(size - 1, (byte) 2);
    return b.get(size - 1);
  }

  static void run(Map<String, String> opts) throws Exception {
    Options options =
        new OptionsBuilder()
            .include(BufferPoolBench.class.getName() + ".")
            .forks(1)
            .warmupIterations(2)
            .warmupTime(TimeValue.seconds(1))
            .measurementIterations(3)
            .measurementTime(TimeValue.seconds(1))
            .build();
    Collection<RunResult> results = new Runner(options).run();
    // size -> operation -> ns/op
    Map<Integer, Map<String, Double>> nanos = new TreeMap<>();
    for (RunResult r : results) {
      int s = Integer.parseInt(r.getParams().getParam("size"));
      String op = r.getParams().getBenchmark();
      op = op.substring(op.lastIndexOf('.') + 1);
      nanos.computeIfAbsent(s, k -> new TreeMap<>()).put(op, r.getPrimaryResult().getScore());
    }
    Table table = new Table("operation", "size", "ns/op", "ops/s", "speed vs allocateDirect");
    for (Map.Entry<Integer, Map<String, Double>> e : nanos.entrySet()) {
      double baseline = e.getValue().getOrDefault("allocateDirect", Double.NaN);
      for (String op : new String[] {"allocateDirect", "poolAcquireRelease"}) {
        Double ns = e.getValue().get(op);
        if (ns == null) {
          continue;
        }
        String label =
            op.equals("allocateDirect")
                ? "ByteBuffer.allocateDirect (GC frees)"
                : "AlignedBufferPool acquire + release";
        table.row(
            label,
            (e.getKey() >> 10) + " KiB",
            Table.f1(ns),
            Table.f1(1e9 / ns),
            Table.f2(baseline / ns) + "x");
      }
    }
    System.out.println();
    System.out.print(table.render());
  }
}
