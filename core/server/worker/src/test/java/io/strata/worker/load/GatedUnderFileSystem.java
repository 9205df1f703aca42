package io.strata.worker.load;

import io.strata.underfs.ForwardingUnderFileSystem;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test under store over local folders, addressed as {@code gated:///abs/path}, whose buffer reads
 * wait while a gate is closed: a test holds a load thread inside a read, as a slow under store
 * would, and looks at what the waiting tasks hold meanwhile.
 */
public final class GatedUnderFileSystem extends ForwardingUnderFileSystem {
  /** Bounds a wait on a gate a test forgot to open; no test relies on it. */
  private static final long MAX_WAIT_SECONDS = 60;

  private static volatile CountDownLatch gate = new CountDownLatch(0);
  private static volatile CountDownLatch entered = new CountDownLatch(0);
  static final AtomicInteger bufferReads = new AtomicInteger();

  GatedUnderFileSystem() {
    super(new LocalUnderFileSystem());
  }

  /** Closes the gate: buffer reads from now on wait until {@link #open}. */
  static void close(int readersToAwait) {
    entered = new CountDownLatch(readersToAwait);
    gate = new CountDownLatch(1);
  }

  /** Waits until that many reads are waiting at the closed gate; false if they never came. */
  static boolean awaitWaiting() throws InterruptedException {
    return entered.await(MAX_WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /** Opens the gate and lets every waiting read go on. */
  static void open() {
    gate.countDown();
  }

  /** The store URI of a local file. */
  static String uri(java.nio.file.Path file) {
    return "gated://" + file.toAbsolutePath();
  }

  /** Found through the service file in the test resources. */
  public static final class Provider implements UnderFileSystemProvider {
    @Override
    public String scheme() {
      return "gated";
    }

    @Override
    public UnderFileSystem open(String uri, Map<String, String> options) {
      return new GatedUnderFileSystem();
    }
  }

  @Override
  protected String delegatePath(String uri) {
    return "file://" + uri.substring("gated://".length());
  }

  @Override
  public String scheme() {
    return "gated";
  }

  @Override
  public int read(String path, long position, ByteBuffer dst) throws IOException {
    bufferReads.incrementAndGet();
    CountDownLatch g = gate;
    if (g.getCount() > 0) {
      entered.countDown();
      try {
        g.await(MAX_WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("read of " + path + " interrupted at the gate");
      }
    }
    return super.read(path, position, dst);
  }
}
