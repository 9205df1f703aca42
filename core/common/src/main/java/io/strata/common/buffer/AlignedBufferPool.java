package io.strata.common.buffer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.metrics.MetricNames;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A thread-safe pool of direct buffers whose addresses and capacities are multiples of 4 KiB (the
 * settings' alignment), so they can be handed to Direct I/O as they are.
 *
 * <p><b>Size classes.</b> Capacities are powers of two from the alignment (4 KiB) up to 1 GiB; a
 * request is rounded up to its class. {@link #acquire} returns an idle buffer of the request's
 * class if there is one, else the smallest idle larger buffer whose capacity is at most {@code
 * maxOversize} times the requested size (the bound; 4 by default), else a newly allocated buffer of
 * the request's class. The buffer comes back with position 0 and limit equal to the requested size;
 * its capacity is that of its class.
 *
 * <p><b>Budget.</b> The budget bounds the direct memory the pool owns, idle and in use together.
 * Before a new allocation that would take the total past the budget, and whenever a release leaves
 * the total past it, idle buffers are freed largest first until the total fits or none are idle.
 * The pool never refuses a request: when the buffers in use alone exceed the budget it allocates
 * anyway, and frees those buffers as they come back. Freeing is immediate (not left to the garbage
 * collector).
 *
 * <p><b>Metrics</b>, named {@code <prefix>.<name>} with the prefix given to the constructor (for
 * example {@link MetricNames#WORKER_BUFFER_POOL}): gauges {@code pooled} (bytes of idle buffers
 * kept for reuse), {@code in.use} (bytes of buffers acquired and not yet released) and {@code
 * in.use.peak} (the high-water mark of {@code in.use} since the pool was created, which shows
 * whether the owner's bound on buffers in use held); counters {@code hits} (requests served by an
 * idle buffer, of its class or larger), {@code misses} (requests no idle buffer could serve),
 * {@code allocations} (new buffers allocated, one per miss) and {@code releases} (buffers freed
 * back to the system, for the budget or on {@link #close}).
 *
 * <p>Locking: one lock guards the idle lists and the byte totals, held only for list and counter
 * updates; allocating and freeing memory happen outside it.
 */
public final class AlignedBufferPool implements AutoCloseable {
  /** The largest size class; a larger request fails. */
  public static final int MAX_CLASS = 1 << 30;

  private final BufferPoolSettings settings;
  private final int minShift;
  private final ReentrantLock lock = new ReentrantLock();

  /** Idle buffers by class index; last in, first out so recently used memory is reused. */
  private final ArrayDeque<Slot>[] idle;

  /** Every buffer the pool owns, by the identity of the buffer handed out. */
  private final Map<ByteBuffer, Slot> owned = new IdentityHashMap<>();

  private final AtomicLong pooledBytes = new AtomicLong();
  private final AtomicLong inUseBytes = new AtomicLong();

  /** Only raised, and only under the lock, so it never misses a maximum of inUseBytes. */
  private final AtomicLong peakInUseBytes = new AtomicLong();

  private boolean closed;

  private final MeterRegistry registry;
  private final List<Meter> meters = new ArrayList<>();
  private final Counter hits;
  private final Counter misses;
  private final Counter allocations;
  private final Counter releases;

  /** One buffer the pool owns. {@code inUse} is guarded by the pool's lock. */
  private static final class Slot {
    final DirectMemory.Aligned memory;
    final int classIndex;
    boolean inUse;

    Slot(DirectMemory.Aligned memory, int classIndex) {
      this.memory = memory;
      this.classIndex = classIndex;
    }

    ByteBuffer buffer() {
      return memory.slice();
    }

    int capacity() {
      return memory.slice().capacity();
    }
  }

  /**
   * Creates an empty pool whose meters are registered in {@code registry} under {@code
   * metricPrefix}; {@link #close} removes them again.
   */
  @SuppressWarnings("unchecked")
  public AlignedBufferPool(
      BufferPoolSettings settings, MeterRegistry registry, String metricPrefix) {
    this.settings = settings;
    this.registry = registry;
    this.minShift = Integer.numberOfTrailingZeros(settings.alignment());
    int classes = Integer.numberOfTrailingZeros(MAX_CLASS) - minShift + 1;
    this.idle = new ArrayDeque[classes];
    for (int i = 0; i < classes; i++) {
      idle[i] = new ArrayDeque<>();
    }
    meters.add(
        Gauge.builder(
                metricPrefix + "." + MetricNames.BUFFER_POOL_POOLED, pooledBytes, AtomicLong::get)
            .baseUnit("bytes")
            .description("Bytes of idle buffers kept for reuse")
            .register(registry));
    meters.add(
        Gauge.builder(
                metricPrefix + "." + MetricNames.BUFFER_POOL_IN_USE, inUseBytes, AtomicLong::get)
            .baseUnit("bytes")
            .description("Bytes of buffers acquired and not yet released")
            .register(registry));
    meters.add(
        Gauge.builder(
                metricPrefix + "." + MetricNames.BUFFER_POOL_IN_USE_PEAK,
                peakInUseBytes,
                AtomicLong::get)
            .baseUnit("bytes")
            .description("Most bytes of buffers in use at once since the pool was created")
            .register(registry));
    hits =
        counter(
            metricPrefix, MetricNames.BUFFER_POOL_HITS, "Requests served by an idle pooled buffer");
    misses =
        counter(
            metricPrefix, MetricNames.BUFFER_POOL_MISSES, "Requests no idle buffer could serve");
    allocations =
        counter(metricPrefix, MetricNames.BUFFER_POOL_ALLOCATIONS, "New direct buffers allocated");
    releases =
        counter(
            metricPrefix,
            MetricNames.BUFFER_POOL_RELEASES,
            "Direct buffers freed back to the system");
  }

  private Counter counter(String prefix, String name, String description) {
    Counter c = Counter.builder(prefix + "." + name).description(description).register(registry);
    meters.add(c);
    return c;
  }

  /** The capacity of the size class a request of {@code size} bytes is rounded up to. */
  public int sizeClass(int size) {
    if (size < 0 || size > MAX_CLASS) {
      throw new IllegalArgumentException(
          "buffer size must be between 0 and "
              + MAX_CLASS
              + " bytes, got "
              + size
              + "; split larger transfers into chunks");
    }
    int min = settings.alignment();
    return size <= min ? min : Integer.highestOneBit(size - 1) << 1;
  }

  /**
   * Returns a direct buffer of at least {@code size} bytes, with position 0, limit {@code size},
   * big-endian order, and address and capacity aligned to the settings' alignment. The caller owns
   * it until it passes it to {@link #release}.
   *
   * @throws IllegalArgumentException if size is negative or above {@link #MAX_CLASS}
   * @throws IllegalStateException if the pool is closed
   */
  public ByteBuffer acquire(int size) {
    int wanted = sizeClass(size);
    int wantedIndex = classIndex(wanted);
    long bound = Math.max((long) wanted, (long) size * settings.maxOversize());
    List<Slot> toFree = new ArrayList<>();
    Slot slot = null;
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException(
            "buffer pool is closed; no buffer of " + size + " bytes can be acquired");
      }
      for (int i = wantedIndex; i < idle.length && (settings.alignment() << i) <= bound; i++) {
        slot = idle[i].pollLast();
        if (slot != null) {
          pooledBytes.addAndGet(-slot.capacity());
          break;
        }
      }
      if (slot == null) {
        freeLargestUntil(settings.budgetBytes() - wanted, toFree);
      }
      long inUse = inUseBytes.addAndGet(slot == null ? wanted : slot.capacity());
      if (inUse > peakInUseBytes.get()) {
        peakInUseBytes.set(inUse);
      }
      if (slot != null) {
        slot.inUse = true;
      }
    } finally {
      lock.unlock();
    }
    freeAll(toFree);
    if (slot != null) {
      hits.increment();
    } else {
      misses.increment();
      slot = allocate(wanted, wantedIndex);
    }
    ByteBuffer buffer = slot.buffer();
    buffer.clear().limit(size);
    buffer.order(ByteOrder.BIG_ENDIAN);
    return buffer;
  }

  private Slot allocate(int capacity, int classIndex) {
    Slot slot;
    try {
      slot = new Slot(DirectMemory.allocate(capacity, settings.alignment()), classIndex);
    } catch (OutOfMemoryError e) {
      inUseBytes.addAndGet(-capacity);
      throw e;
    }
    allocations.increment();
    slot.inUse = true;
    lock.lock();
    try {
      owned.put(slot.buffer(), slot);
    } finally {
      lock.unlock();
    }
    return slot;
  }

  /**
   * Gives back a buffer from {@link #acquire}; the caller must not touch it afterwards. It is kept
   * for reuse, or freed if the pool is past its budget or closed.
   *
   * @throws IllegalArgumentException if the buffer is not one this pool handed out, or was already
   *     released
   */
  public void release(ByteBuffer buffer) {
    List<Slot> toFree = new ArrayList<>();
    lock.lock();
    try {
      Slot slot = buffer == null ? null : owned.get(buffer);
      if (slot == null) {
        throw new IllegalArgumentException(
            "buffer "
                + buffer
                + " was not acquired from this "
                + "pool; release only the buffer object acquire returned");
      }
      if (!slot.inUse) {
        throw new IllegalArgumentException(
            "buffer of "
                + slot.capacity()
                + " bytes was "
                + "released twice; release each acquired buffer exactly once");
      }
      slot.inUse = false;
      inUseBytes.addAndGet(-slot.capacity());
      if (closed) {
        owned.remove(buffer);
        toFree.add(slot);
      } else {
        idle[slot.classIndex].addLast(slot);
        pooledBytes.addAndGet(slot.capacity());
        freeLargestUntil(settings.budgetBytes(), toFree);
      }
    } finally {
      lock.unlock();
    }
    freeAll(toFree);
  }

  /** Under the lock: takes idle buffers, largest first, until the owned total is <= limit. */
  private void freeLargestUntil(long limit, List<Slot> toFree) {
    for (int i = idle.length - 1; i >= 0 && pooledBytes.get() + inUseBytes.get() > limit; i--) {
      ArrayDeque<Slot> list = idle[i];
      while (!list.isEmpty() && pooledBytes.get() + inUseBytes.get() > limit) {
        Slot victim = list.pollFirst();
        pooledBytes.addAndGet(-victim.capacity());
        owned.remove(victim.buffer());
        toFree.add(victim);
      }
    }
  }

  private void freeAll(List<Slot> slots) {
    for (Slot s : slots) {
      DirectMemory.free(s.memory);
      releases.increment();
    }
  }

  private int classIndex(int sizeClass) {
    return Integer.numberOfTrailingZeros(sizeClass) - minShift;
  }

  /** Bytes of idle buffers kept for reuse. */
  public long pooledBytes() {
    return pooledBytes.get();
  }

  /** Bytes of buffers acquired and not yet released. */
  public long inUseBytes() {
    return inUseBytes.get();
  }

  /**
   * The most bytes of buffers that were acquired and not yet released at any one time since the
   * pool was created (capacities, as {@link #inUseBytes} counts them).
   */
  public long peakInUseBytes() {
    return peakInUseBytes.get();
  }

  /** Requests served by an idle buffer since the pool was created. */
  public long hits() {
    return (long) hits.count();
  }

  /** Requests that needed a new buffer since the pool was created. */
  public long misses() {
    return (long) misses.count();
  }

  /** New buffers allocated since the pool was created. */
  public long allocations() {
    return (long) allocations.count();
  }

  /** Buffers freed back to the system since the pool was created. */
  public long releases() {
    return (long) releases.count();
  }

  /** The limits this pool was built with. */
  public BufferPoolSettings settings() {
    return settings;
  }

  /**
   * Frees every idle buffer and removes the pool's meters. Buffers still in use stay valid and are
   * freed when released; further acquires fail. Idempotent.
   */
  @Override
  public void close() {
    List<Slot> toFree = new ArrayList<>();
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      for (ArrayDeque<Slot> list : idle) {
        for (Slot s : list) {
          owned.remove(s.buffer());
          toFree.add(s);
        }
        list.clear();
      }
      pooledBytes.set(0);
    } finally {
      lock.unlock();
    }
    freeAll(toFree);
    meters.forEach(registry::remove);
  }
}
