package io.strata.tests;

import java.nio.file.Path;

/**
 * A FUSE mount process of a {@link MultiProcessCluster}: its pid, where it mounts and the release
 * it runs. Stop it with {@link MultiProcessCluster#stopFuse(FuseProcess)}; the cluster stops those
 * still running when it closes.
 */
public final class FuseProcess {
  private final String name;
  private final Process process;
  private final Path mountPoint;
  private final Release release;

  FuseProcess(String name, Process process, Path mountPoint, Release release) {
    this.name = name;
    this.process = process;
    this.mountPoint = mountPoint;
    this.release = release;
  }

  /** Its name in the cluster's logs folder: {@code <name>.log} and {@code <name>.out}. */
  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  /** The mount point, absolute and normalised. */
  public Path mountPoint() {
    return mountPoint;
  }

  public Release release() {
    return release;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  Process process() {
    return process;
  }

  @Override
  public String toString() {
    return name + " (pid " + pid() + ", " + mountPoint + ", " + release + ")";
  }
}
