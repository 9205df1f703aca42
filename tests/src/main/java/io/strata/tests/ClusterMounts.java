package io.strata.tests;

import io.strata.common.ProcMounts;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The FUSE mount processes of a {@link MultiProcessCluster}, started as {@code strata fuse mount}
 * starts them (FuseMain with the mount point and namespace path as arguments, the configuration as
 * -D properties, its own log file) and counted as started only once the kernel lists the mount.
 * Stopping one asks it to unmount (SIGTERM, which FuseMain answers by unmounting) and falls back to
 * {@code fusermount -u -z} when it does not. Not thread-safe: the cluster calls it under its own
 * lock.
 */
final class ClusterMounts {
  static final Duration MOUNT_TIMEOUT = Duration.ofSeconds(60);
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  /** The log configuration of a mount process, from integration/fuse. */
  private static final String LOG_CONFIGURATION = "strata-fuse-logback-file.xml";

  private final ClusterLauncher launcher;
  private final Path logsDir;
  private final List<FuseProcess> running = new ArrayList<>();
  private int started;

  ClusterMounts(ClusterLauncher launcher, Path logsDir) {
    this.launcher = launcher;
    this.logsDir = logsDir;
  }

  /**
   * Mounts the namespace root at {@code mountPoint} from {@code release} and waits until the kernel
   * lists the mount.
   *
   * @param configuration the process's configuration (its release's unknown keys are left out)
   * @param jvmOptions heap and other JVM bounds
   */
  FuseProcess start(
      Path mountPoint, Map<String, String> configuration, List<String> jvmOptions, Release release)
      throws IOException {
    Path point = mountPoint.toAbsolutePath().normalize();
    if (ProcMounts.isFuseMounted(point)) {
      throw new IllegalStateException(point + " is already a FUSE mount");
    }
    if (!Files.isDirectory(point)) {
      throw new IllegalArgumentException("Mount point is not a folder: " + point);
    }
    String name = "fuse" + started++;
    Map<String, String> props = new LinkedHashMap<>(configuration);
    // After the configuration, as `strata fuse mount` puts them: these win.
    props.put("logback.configurationFile", LOG_CONFIGURATION);
    props.put("strata.log.file", logsDir.resolve(name + ".log").toString());
    Process p =
        launcher.launch(
            name, release, Release.Role.FUSE, props, jvmOptions, List.of(point.toString(), "/"));
    FuseProcess fuse = new FuseProcess(name, p, point, release);
    running.add(fuse);
    try {
      MultiProcessCluster.waitFor(
          "the FUSE mount at " + point, MOUNT_TIMEOUT, () -> ProcMounts.isFuseMounted(point), p);
    } catch (IllegalStateException e) {
      stopQuietly(fuse);
      throw new IllegalStateException(
          e.getMessage()
              + "; last lines of its log:\n"
              + MultiProcessCluster.tail(logsDir.resolve(name + ".log"))
              + MultiProcessCluster.tail(logsDir.resolve(name + ".out")),
          e);
    }
    return fuse;
  }

  /**
   * Unmounts and ends a mount process: SIGTERM and a bounded wait, then {@code fusermount -u -z}
   * and a kill when it is still mounted or running.
   *
   * @return whether SIGTERM alone unmounted it and ended the process
   * @throws IllegalStateException when the mount point is still mounted at the end
   */
  boolean stop(FuseProcess fuse) throws InterruptedException {
    Process p = fuse.process();
    Path point = fuse.mountPoint();
    if (p.isAlive()) {
      p.destroy();
      p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }
    boolean clean = !p.isAlive() && !ProcMounts.isFuseMounted(point);
    if (!clean) {
      if (ProcMounts.isFuseMounted(point)) {
        lazyUnmount(point);
      }
      p.destroyForcibly();
      p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }
    running.remove(fuse);
    if (ProcMounts.isFuseMounted(point)) {
      throw new IllegalStateException(
          "Cannot unmount " + point + " of " + fuse + "; try: fusermount -u -z " + point);
    }
    return clean;
  }

  /**
   * Kills a mount's process with SIGKILL, as a crash would, and detaches what it leaves (a mount
   * point answering ENOTCONN) with {@code fusermount -u -z}, so that it can be mounted again.
   */
  void kill(FuseProcess fuse) throws InterruptedException {
    Process p = fuse.process();
    p.destroyForcibly();
    p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    if (ProcMounts.isFuseMounted(fuse.mountPoint())) {
      lazyUnmount(fuse.mountPoint());
    }
    running.remove(fuse);
  }

  /** Stops every mount still running, as far as it can. */
  void stopAll() {
    for (FuseProcess f : new ArrayList<>(running)) {
      stopQuietly(f);
    }
  }

  /** {@link #stop}, for paths that already fail or close: what cannot be undone is left. */
  private void stopQuietly(FuseProcess fuse) {
    try {
      stop(fuse);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      fuse.process().destroyForcibly();
    } catch (IllegalStateException e) {
      // Still listed after fusermount -u -z: nothing more to try from here.
    }
  }

  /** {@code fusermount -u -z}: detaches the mount even while files in it are open. */
  private static void lazyUnmount(Path point) throws InterruptedException {
    try {
      Process p =
          new ProcessBuilder("fusermount", "-u", "-z", point.toString())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
      if (!p.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    } catch (IOException e) {
      // No fusermount: the caller reports the mount that stayed.
    }
  }
}
