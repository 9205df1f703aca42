package io.strata.journal;

import io.strata.server.common.FolderLock;
import java.nio.file.Path;

/**
 * Holds a master's {@link FolderLock} on a folder from another process, as a running master does,
 * until its standard input closes. Prints "locked" once it holds the lock.
 */
public final class LockHolder {
  private LockHolder() {}

  public static void main(String[] args) throws Exception {
    try (FolderLock lock =
        FolderLock.acquire(Path.of(args[0]), "master journal", "strata.master.journal.dir")) {
      System.out.println("locked");
      System.out.flush();
      while (System.in.read() >= 0) {
        // Wait for the test to close our input.
      }
    }
  }
}
