package io.strata.common.buffer;

import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Allocates direct buffers whose address and capacity are multiples of an alignment, and frees them
 * at once instead of at some later garbage collection. Before the foreign-memory API (Java 22) the
 * only way to free a direct buffer on demand is {@code sun.misc.Unsafe .invokeCleaner} from the
 * jdk.unsupported module; it accepts only a buffer that owns its memory, so the unaligned parent is
 * kept beside the aligned slice and is what gets freed. If the call is missing, freeing falls back
 * to the garbage collector.
 */
final class DirectMemory {
  private static final Logger LOG = LoggerFactory.getLogger(DirectMemory.class);
  private static final Cleaner CLEANER = Cleaner.find();

  private DirectMemory() {}

  /** A direct buffer of {@code capacity} bytes at an aligned address, and its owning parent. */
  record Aligned(ByteBuffer parent, ByteBuffer slice) {}

  /** Allocates {@code capacity} bytes (a multiple of {@code alignment}) at an aligned address. */
  static Aligned allocate(int capacity, int alignment) {
    ByteBuffer parent = ByteBuffer.allocateDirect(capacity + alignment - 1);
    ByteBuffer slice = parent.alignedSlice(alignment);
    // alignedSlice may leave up to alignment-1 bytes spare at the end; pin the capacity.
    slice = slice.limit(capacity).slice();
    return new Aligned(parent, slice);
  }

  /** Frees the memory of a buffer returned by {@link #allocate}; the slice must not be used. */
  static void free(Aligned buffer) {
    CLEANER.clean(buffer.parent());
  }

  /** Whether buffers are freed at once (false: they wait for the garbage collector). */
  static boolean freesAtOnce() {
    return CLEANER.invokeCleaner != null;
  }

  private record Cleaner(Object unsafe, Method invokeCleaner) {
    static Cleaner find() {
      try {
        Class<?> c = Class.forName("sun.misc.Unsafe");
        var field = c.getDeclaredField("theUnsafe");
        field.setAccessible(true);
        return new Cleaner(field.get(null), c.getMethod("invokeCleaner", ByteBuffer.class));
      } catch (ReflectiveOperationException | RuntimeException e) {
        LOG.warn(
            "Direct buffers will be freed by the garbage collector, not at once: {}", e.toString());
        return new Cleaner(null, null);
      }
    }

    void clean(ByteBuffer parent) {
      if (invokeCleaner == null) {
        return;
      }
      try {
        invokeCleaner.invoke(unsafe, parent);
      } catch (ReflectiveOperationException | RuntimeException e) {
        LOG.warn(
            "Could not free a direct buffer of {} bytes at once; the garbage collector "
                + "will: {}",
            parent.capacity(),
            e.toString());
      }
    }
  }
}
