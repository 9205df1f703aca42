package io.strata.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * 4 KiB writes at random 4 KiB-aligned offsets of one existing file, from one thread with one
 * descriptor opened read-write, as a job that updates records in place does: for a time, bounded
 * also by a count, then fsync, then close, each timed on its own. The offsets come from a fixed
 * seed and each page written holds a pattern of its write's index and offset, so after the close a
 * fresh open reads a sample of the written pages back and knows what each must hold: the last write
 * to its offset.
 */
final class RandomPwrites {
  static final int PAGE = 4096;

  /** Pages read back after the close, at most. */
  static final int SAMPLE = 10_000;

  private static final long SEED = 41;

  /**
   * The figures of one run: writes done and their seconds, seconds of fsync and of close, pages
   * read back and how many of them held something else.
   */
  record Result(
      long writes,
      double writeSeconds,
      double fsyncSeconds,
      double closeSeconds,
      long checked,
      long wrong) {
    double iops() {
      return writes / writeSeconds;
    }
  }

  private RandomPwrites() {}

  /**
   * Writes into {@code file} (which must exist and be at least one page long) for {@code seconds}
   * or {@code maxWrites}, whichever ends first, then checks a sample.
   *
   * @param size the file's length; every write lands inside it
   */
  static Result run(Path file, long size, double seconds, long maxWrites) throws IOException {
    long pages = size / PAGE;
    SplittableRandom offsets = new SplittableRandom(SEED);
    ByteBuffer buf = ByteBuffer.allocateDirect(PAGE);
    String stage = "open O_RDWR";
    FileChannel ch = null;
    try {
      ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
      stage = "pwrite";
      long writes = 0;
      long start = System.nanoTime();
      long end = start + (long) (seconds * 1e9);
      for (; writes < maxWrites && System.nanoTime() < end; writes++) {
        long offset = offsets.nextLong(pages) * PAGE;
        fill(buf, writes, offset);
        while (buf.hasRemaining()) {
          ch.write(buf, offset + buf.position());
        }
      }
      long written = System.nanoTime();
      stage = "fsync";
      ch.force(true);
      long synced = System.nanoTime();
      stage = "close";
      FileChannel closing = ch;
      ch = null;
      closing.close();
      long closed = System.nanoTime();
      stage = "read back";
      long[] check = check(file, pages, writes);
      return new Result(
          writes,
          (written - start) / 1e9,
          (synced - written) / 1e9,
          (closed - synced) / 1e9,
          check[0],
          check[1]);
    } catch (IOException | RuntimeException e) {
      if (ch != null) {
        try {
          ch.close();
        } catch (IOException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw new IOException(stage + ": " + PosixWriteBench.why(e), e);
    }
  }

  /** The pattern of write {@code index} at {@code offset}: 512 longs, each unique to both. */
  private static void fill(ByteBuffer buf, long index, long offset) {
    buf.clear();
    long base = index * 0x9E3779B97F4A7C15L ^ offset;
    for (int i = 0; i < PAGE / Long.BYTES; i++) {
      buf.putLong(i * Long.BYTES, base + i);
    }
  }

  /**
   * Replays the offsets of {@code writes} writes and reads back, through a fresh descriptor, the
   * offset of every (writes / SAMPLE)-th write; returns [pages checked, pages wrong].
   */
  private static long[] check(Path file, long pages, long writes) throws IOException {
    long every = Math.max(1, writes / SAMPLE);
    // Sampled offset -> index of the last write to it.
    Map<Long, Long> last = new HashMap<>();
    SplittableRandom offsets = new SplittableRandom(SEED);
    for (long k = 0; k < writes; k++) {
      long offset = offsets.nextLong(pages) * PAGE;
      if (k % every == 0 || last.containsKey(offset)) {
        last.put(offset, k);
      }
    }
    ByteBuffer expected = ByteBuffer.allocateDirect(PAGE);
    ByteBuffer got = ByteBuffer.allocateDirect(PAGE);
    long wrong = 0;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      for (Map.Entry<Long, Long> e : last.entrySet()) {
        fill(expected, e.getValue(), e.getKey());
        got.clear();
        while (got.hasRemaining() && ch.read(got, e.getKey() + got.position()) > 0) {
          // reads until the page is whole or the file ends
        }
        got.flip();
        if (!got.equals(expected.clear())) {
          wrong++;
        }
      }
    }
    return new long[] {last.size(), wrong};
  }
}
