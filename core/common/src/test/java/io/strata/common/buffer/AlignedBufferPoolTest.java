package io.strata.common.buffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.conf.StrataConfig;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AlignedBufferPoolTest {
  private static final int KB = 1024;
  private static final String PREFIX = "test.buffer.pool";

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final List<AlignedBufferPool> pools = new ArrayList<>();

  private AlignedBufferPool pool(long budget, int maxOversize) {
    AlignedBufferPool p =
        new AlignedBufferPool(BufferPoolSettings.of(budget, maxOversize), registry, PREFIX);
    pools.add(p);
    return p;
  }

  @AfterEach
  void closePools() {
    pools.forEach(AlignedBufferPool::close);
  }

  @Test
  void requestIsRoundedUpToItsPowerOfTwoClass() {
    AlignedBufferPool p = pool(64L << 20, 4);
    assertEquals(4 * KB, p.sizeClass(0));
    assertEquals(4 * KB, p.sizeClass(1));
    assertEquals(4 * KB, p.sizeClass(4 * KB));
    assertEquals(8 * KB, p.sizeClass(4 * KB + 1));
    assertEquals(64 * KB, p.sizeClass(40_000));
    assertEquals(1 << 30, p.sizeClass(1 << 30));
    ByteBuffer b = p.acquire(5000);
    assertEquals(8 * KB, b.capacity());
    assertEquals(0, b.position());
    assertEquals(5000, b.limit());
    assertThrows(IllegalArgumentException.class, () -> p.acquire(-1));
    assertThrows(IllegalArgumentException.class, () -> p.acquire((1 << 30) + 1));
  }

  @Test
  void bufferAddressAndCapacityAreAlignedTo4096() {
    AlignedBufferPool p = pool(64L << 20, 4);
    for (int size : new int[] {1, 4095, 4096, 10_000, 64 * KB, 1 << 20, (4 << 20) - 7}) {
      ByteBuffer b = p.acquire(size);
      assertTrue(b.isDirect());
      assertEquals(0, b.alignmentOffset(0, 4096), "address of a buffer for " + size + " bytes");
      assertEquals(0, b.capacity() % 4096, "capacity of a buffer for " + size + " bytes");
      b.put(size - 1, (byte) 7); // the whole requested range is writable
      p.release(b);
    }
  }

  @Test
  void releasedBufferServesTheNextRequestOfItsClass() {
    AlignedBufferPool p = pool(64L << 20, 4);
    ByteBuffer first = p.acquire(10_000);
    first.position(123).limit(200);
    p.release(first);
    ByteBuffer second = p.acquire(12_000);
    assertSame(first, second);
    assertEquals(0, second.position());
    assertEquals(12_000, second.limit());
    assertEquals(1, p.hits());
    assertEquals(1, p.misses());
    assertEquals(1, p.allocations());
  }

  @Test
  void largerIdleBufferWithinFourTimesTheRequestServesIt() {
    AlignedBufferPool p = pool(64L << 20, 4);
    ByteBuffer big = p.acquire(256 * KB);
    p.release(big);
    ByteBuffer b = p.acquire(64 * KB);
    assertSame(big, b);
    assertEquals(256 * KB, b.capacity());
    assertEquals(64 * KB, b.limit());
    assertEquals(1, p.hits());
    assertEquals(1, p.allocations());
  }

  @Test
  void idleBufferPastFourTimesTheRequestIsNotUsedAndANewOneIsAllocated() {
    AlignedBufferPool p = pool(64L << 20, 4);
    ByteBuffer big = p.acquire(512 * KB);
    p.release(big);
    ByteBuffer b = p.acquire(64 * KB);
    assertNotSame(big, b);
    assertEquals(64 * KB, b.capacity());
    assertEquals(0, p.hits());
    assertEquals(2, p.misses());
    assertEquals(2, p.allocations());
    assertEquals(512 * KB, p.pooledBytes());
  }

  @Test
  void oversizeFactorOfOneStillServesTheRequestsOwnClass() {
    AlignedBufferPool p = pool(64L << 20, 1);
    ByteBuffer b = p.acquire(5000);
    p.release(b);
    assertSame(b, p.acquire(6000));
    ByteBuffer larger = p.acquire(16 * KB);
    p.release(larger);
    assertNotSame(larger, p.acquire(8 * KB));
  }

  @Test
  void allocationThatWouldExceedTheBudgetFirstFreesIdleBuffersLargestFirst() {
    AlignedBufferPool p = pool(100 * KB, 1);
    ByteBuffer a = p.acquire(8 * KB);
    ByteBuffer b = p.acquire(16 * KB);
    ByteBuffer c = p.acquire(32 * KB);
    p.release(a);
    p.release(b);
    p.release(c);
    assertEquals(56 * KB, p.pooledBytes());
    assertEquals(0, p.releases());

    // 56 KiB idle + 64 KiB new > 100 KiB: freeing the 32 KiB buffer alone makes it fit.
    ByteBuffer d = p.acquire(64 * KB);
    assertEquals(1, p.releases());
    assertEquals(24 * KB, p.pooledBytes());
    assertEquals(64 * KB, p.inUseBytes());
    assertSame(a, p.acquire(8 * KB));
    assertSame(b, p.acquire(16 * KB));
    assertNotSame(c, p.acquire(32 * KB));
    assertEquals(1, p.releases());
    p.release(d);
  }

  @Test
  void buffersReleasedWhileOverBudgetAreFreedUntilTheTotalFits() {
    AlignedBufferPool p = pool(64 * KB, 4);
    ByteBuffer a = p.acquire(64 * KB);
    ByteBuffer b = p.acquire(16 * KB); // the pool never refuses: 80 KiB owned now
    assertEquals(80 * KB, p.inUseBytes());
    p.release(b);
    assertEquals(1, p.releases(), "the 16 KiB buffer is freed: keeping it exceeds the budget");
    assertEquals(0, p.pooledBytes());
    p.release(a);
    assertEquals(1, p.releases(), "64 KiB fits the budget and is kept");
    assertEquals(64 * KB, p.pooledBytes());
  }

  @Test
  void zeroBudgetKeepsNothingIdle() {
    AlignedBufferPool p = pool(0, 4);
    ByteBuffer b = p.acquire(4 * KB);
    p.release(b);
    assertEquals(0, p.pooledBytes());
    assertEquals(1, p.releases());
    assertEquals(0, p.inUseBytes());
  }

  @Test
  void countersAndGaugesTrackThePool() {
    AlignedBufferPool p = pool(1 << 20, 4);
    ByteBuffer a = p.acquire(64 * KB);
    ByteBuffer b = p.acquire(100 * KB); // class 128 KiB
    assertEquals(192 * KB, gauge("in.use"));
    assertEquals(0, gauge("pooled"));
    p.release(a);
    assertEquals(128 * KB, gauge("in.use"));
    assertEquals(64 * KB, gauge("pooled"));
    ByteBuffer c = p.acquire(60 * KB); // hit on a
    ByteBuffer d = p.acquire(900 * KB); // class 1 MiB: 1 MiB + 192 KiB > budget, nothing idle
    p.release(c); // 1216 KiB owned, over budget: c is freed, not kept
    p.release(d); // still over budget: d is freed too
    p.release(b); // 128 KiB fits: kept
    assertEquals(0, gauge("in.use"));
    assertEquals(128 * KB, gauge("pooled"));
    assertEquals(1, count("hits"));
    assertEquals(3, count("misses"));
    assertEquals(3, count("allocations"));
    assertEquals(2, count("releases"));
    p.close();
    assertEquals(3, p.releases());
    assertTrue(registry.find(PREFIX + ".pooled").meters().isEmpty(), "close removes meters");
  }

  @Test
  void peakInUseIsTheHighWaterMarkOfBuffersHeldAtOnce() {
    AlignedBufferPool p = pool(1 << 20, 4);
    assertEquals(0, p.peakInUseBytes());
    ByteBuffer a = p.acquire(64 * KB);
    ByteBuffer b = p.acquire(100 * KB); // class 128 KiB: 192 KiB held at once
    assertEquals(192 * KB, p.peakInUseBytes());
    p.release(a);
    p.release(b);
    assertEquals(0, p.inUseBytes());
    assertEquals(192 * KB, p.peakInUseBytes(), "the peak stays when buffers come back");
    ByteBuffer c = p.acquire(60 * KB); // a hit on the 64 KiB buffer: below the peak
    assertEquals(192 * KB, p.peakInUseBytes());
    ByteBuffer d = p.acquire(256 * KB);
    assertEquals(64 * KB + 256 * KB, p.peakInUseBytes(), "a higher total raises it");
    assertEquals(320 * KB, gauge("in.use.peak"));
    p.release(c);
    p.release(d);
    assertEquals(320 * KB, gauge("in.use.peak"));
    p.close();
    assertTrue(registry.find(PREFIX + ".in.use.peak").meters().isEmpty(), "close removes it");
  }

  @Test
  void peakInUseOfConcurrentUsersIsAtMostWhatTheyHeldTogether() throws Exception {
    AlignedBufferPool p = pool(4L << 20, 4);
    int threads = 4;
    ExecutorService executor = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            executor.submit(
                () -> {
                  for (int i = 0; i < 2_000; i++) {
                    p.release(p.acquire(64 * KB)); // each thread holds at most one 64 KiB buffer
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      executor.shutdown();
    }
    assertTrue(p.peakInUseBytes() >= 64 * KB, "peak " + p.peakInUseBytes());
    assertTrue(p.peakInUseBytes() <= threads * 64L * KB, "peak " + p.peakInUseBytes());
  }

  @Test
  void releaseOfAForeignBufferOrASecondReleaseFails() {
    AlignedBufferPool p = pool(1 << 20, 4);
    ByteBuffer b = p.acquire(8 * KB);
    assertThrows(
        IllegalArgumentException.class, () -> p.release(ByteBuffer.allocateDirect(8 * KB)));
    assertThrows(IllegalArgumentException.class, () -> p.release(b.duplicate()));
    assertThrows(IllegalArgumentException.class, () -> p.release(null));
    p.release(b);
    assertThrows(IllegalArgumentException.class, () -> p.release(b));
    assertEquals(0, p.inUseBytes());
    assertEquals(8 * KB, p.pooledBytes());
  }

  @Test
  void closeFreesIdleBuffersNowAndBuffersInUseWhenReleased() {
    AlignedBufferPool p = pool(1 << 20, 4);
    ByteBuffer a = p.acquire(8 * KB);
    ByteBuffer b = p.acquire(8 * KB);
    p.release(a);
    p.close();
    assertTrue(DirectMemory.freesAtOnce(), "freed by the cleaner, not left to the collector");
    assertEquals(1, p.releases());
    assertEquals(0, p.pooledBytes());
    b.putLong(0, 42L); // still valid while in use
    p.release(b);
    assertEquals(2, p.releases());
    assertThrows(IllegalStateException.class, () -> p.acquire(4 * KB));
  }

  @Test
  void concurrentAcquireAndReleaseEndWithNothingInUse() throws Exception {
    AlignedBufferPool p = pool(2L << 20, 4);
    int threads = 8;
    int rounds = 10_000;
    ExecutorService executor = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int seed = t;
        done.add(
            executor.submit(
                () -> {
                  for (int i = 0; i < rounds; i++) {
                    int size = 1 + ((seed * 7919 + i * 104_729) % (256 * KB));
                    ByteBuffer b = p.acquire(size);
                    assertEquals(0, b.alignmentOffset(0, 4096));
                    b.put(0, (byte) i).put(size - 1, (byte) seed);
                    p.release(b);
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      executor.shutdown();
    }
    assertEquals(0, p.inUseBytes());
    assertEquals((long) threads * rounds, p.hits() + p.misses());
    assertEquals(p.misses(), p.allocations());
    assertTrue(p.pooledBytes() <= 2L << 20, "idle bytes within the budget: " + p.pooledBytes());
  }

  @Test
  void workerSettingsComeFromTheWorkerKeys() {
    BufferPoolSettings defaults = BufferPoolSettings.fromWorker(StrataConfig.load(Map.of()));
    assertEquals(256L << 20, defaults.budgetBytes());
    assertEquals(4, defaults.maxOversize());
    assertEquals(4096, defaults.alignment());
    BufferPoolSettings set =
        BufferPoolSettings.fromWorker(
            StrataConfig.load(
                Map.of(
                    "strata.worker.buffer.pool.budget", "1GB",
                    "strata.worker.buffer.pool.max.oversize", "2")));
    assertEquals(1L << 30, set.budgetBytes());
    assertEquals(2, set.maxOversize());
    assertThrows(IllegalArgumentException.class, () -> BufferPoolSettings.of(1, 0));
    assertThrows(IllegalArgumentException.class, () -> BufferPoolSettings.of(-1, 4));
    assertThrows(IllegalArgumentException.class, () -> new BufferPoolSettings(1, 4, 512));
  }

  private double gauge(String name) {
    return registry.get(PREFIX + "." + name).gauge().value();
  }

  private double count(String name) {
    return registry.get(PREFIX + "." + name).counter().count();
  }
}
