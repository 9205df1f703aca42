package io.strata.fuse;

import io.strata.common.DaemonThreads;
import io.strata.common.ProcMounts;
import io.strata.common.conf.FuseKeys;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import ru.serce.jnrfuse.utils.MountUtils;

/**
 * A FUSE file system mounted at a folder, served until it is unmounted.
 *
 * <p>The mount is served either by {@link UpcallThreads}, a fixed set of Java threads (the
 * default), or, with zero upcall threads, by libfuse's own multithreaded loop through jnr-fuse's
 * blocking {@code mount}. Either way one thread of this class owns the serving and ends when the
 * mount goes away. The mount counts as done only once the kernel lists it in {@code /proc/mounts};
 * a mount that fails (that thread ends first) or does not appear in time is an error. {@link
 * #close()} unmounts, and falls back to a lazy {@code fusermount -u -z} when the mount is still
 * listed, so no dead mount is left behind.
 */
public final class FuseMount implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FuseMount.class);

  private final StrataFuseFileSystem fileSystem;
  private final Path mountPoint;
  private final int upcallThreads;
  private final Thread loop;
  private volatile Throwable loopFailure;
  // Set once libfuse has set the mount up (upcall threads only). Being listed in /proc/mounts
  // comes earlier: libfuse mounts before it checks the rest of its options, and takes the mount
  // down again if one is wrong.
  private volatile boolean setUp;
  private volatile boolean closed;

  private FuseMount(
      StrataFuseFileSystem fileSystem, Path mountPoint, List<String> options, int upcallThreads) {
    this.fileSystem = fileSystem;
    this.mountPoint = mountPoint;
    this.upcallThreads = upcallThreads;
    this.loop =
        DaemonThreads.daemon(
            () -> {
              try {
                if (upcallThreads > 0) {
                  UpcallThreads served =
                      UpcallThreads.mount(
                          mountPoint,
                          fileSystem.name(),
                          options,
                          fileSystem.operations(),
                          upcallThreads,
                          fileSystem.kernelEntries());
                  setUp = true;
                  served.awaitEnd();
                } else {
                  fileSystem.mount(mountPoint, true, false, options.toArray(new String[0]));
                }
              } catch (Throwable t) {
                loopFailure = t;
              }
            },
            "strata-fuse-loop");
  }

  /**
   * As {@link #mount(StrataFuseFileSystem, Path, List, int, Duration)} with the default threads.
   */
  public static FuseMount mount(
      StrataFuseFileSystem fileSystem, Path mountPoint, List<String> options, Duration timeout)
      throws StrataException {
    return mount(
        fileSystem,
        mountPoint,
        options,
        Integer.parseInt(FuseKeys.UPCALL_THREADS.defaultValue()),
        timeout);
  }

  /**
   * Mounts {@code fileSystem} at {@code mountPoint} and returns once the kernel lists the mount.
   *
   * @param options libfuse arguments passed as they are, e.g. {@code ["-o", "attr_timeout=1"]}
   * @param upcallThreads threads that serve the mount's requests; 0 leaves it to libfuse's own loop
   *     (see {@link UpcallThreads} for why that is not the default)
   * @throws StrataException UNAVAILABLE when the mount fails or does not appear within {@code
   *     timeout}; the message says what to check
   */
  public static FuseMount mount(
      StrataFuseFileSystem fileSystem,
      Path mountPoint,
      List<String> options,
      int upcallThreads,
      Duration timeout)
      throws StrataException {
    Path point = mountPoint.toAbsolutePath().normalize();
    if (!Files.isDirectory(point)) {
      throw StrataException.invalidArgument(
          "Mount point is not a directory: " + point + ": create it first");
    }
    if (upcallThreads < 0) {
      throw StrataException.invalidArgument(
          "Upcall threads must be 0 (libfuse's loop) or more,"
              + " not "
              + upcallThreads
              + ": fix "
              + FuseKeys.UPCALL_THREADS.name());
    }
    FuseMount m = new FuseMount(fileSystem, point, options, upcallThreads);
    m.loop.start();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!(isMounted(point) && (upcallThreads == 0 || m.setUp))) {
      if (!m.loop.isAlive()) {
        throw new StrataException(
            ErrorCode.UNAVAILABLE,
            "Cannot mount at "
                + point
                + ": libfuse stopped"
                + (m.loopFailure == null ? "" : " (" + m.loopFailure + ")")
                + "; check that /dev/fuse exists, the fuse package is installed and the folder is"
                + " not mounted already",
            m.loopFailure);
      }
      if (System.nanoTime() > deadline) {
        m.close();
        throw new StrataException(
            ErrorCode.UNAVAILABLE,
            "Mount at "
                + point
                + " did not appear in /proc/mounts within "
                + timeout.toSeconds()
                + " s");
      }
      sleep(20);
    }
    LOG.info("Mounted Strata at {} with options {}", point, options);
    return m;
  }

  public Path mountPoint() {
    return mountPoint;
  }

  /** Blocks until the file system is unmounted (by {@link #close()} or from outside). */
  public void awaitUnmount() throws InterruptedException {
    loop.join();
  }

  /** Whether the kernel lists a FUSE mount at {@code point}. */
  public static boolean isMounted(Path point) {
    return ProcMounts.isFuseMounted(point.toAbsolutePath().normalize());
  }

  /**
   * Unmounts and waits (bounded) for the serving thread to end. Idempotent. Falls back to {@code
   * fusermount -u -z} when the mount is still listed afterwards.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (upcallThreads > 0) {
        MountUtils.umount(mountPoint);
      } else {
        fileSystem.umount();
      }
    } catch (RuntimeException e) {
      LOG.warn("Unmounting {} failed: {}", mountPoint, e.toString());
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (isMounted(mountPoint) && System.nanoTime() < deadline) {
      sleep(50);
    }
    if (isMounted(mountPoint)) {
      lazyUnmount(mountPoint);
    }
    try {
      loop.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LOG.info("Unmounted Strata from {}", mountPoint);
  }

  /** {@code fusermount -u -z}: detaches the mount now, even when files are still open in it. */
  public static void lazyUnmount(Path point) {
    List<String> cmd = new ArrayList<>(List.of("fusermount", "-u", "-z", point.toString()));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      LOG.warn(
          "Lazy unmount of {} ran: exit {} {}",
          point,
          p.isAlive() ? "timeout" : p.exitValue(),
          out);
    } catch (IOException e) {
      LOG.warn("Cannot run fusermount for {}: {}", point, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a FUSE mount", e);
    }
  }
}
