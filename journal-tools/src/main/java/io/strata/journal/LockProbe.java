package io.strata.journal;

import io.strata.server.common.FolderLock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Tells whether a running process holds a lock file: the master's {@link FolderLock} on its journal
 * folder ({@code .lock}, holding the pid) or Ratis's {@code in_use.lock} of a Raft group folder
 * (holding {@code pid@host}). Both are OS file locks, so a lock file left by a process that died is
 * not held. The probe takes a shared lock on a read-only channel and releases it at once: it needs
 * no write permission and never changes the file.
 *
 * <p>When this JVM itself holds the lock (a master run in the same JVM, as tests do), the probe
 * keeps its channel open for good: closing any descriptor of a file drops every POSIX lock the
 * process holds on it, which would free the master's lock behind its back.
 */
final class LockProbe {
  /** Channels that must stay open (see the class comment); a closed one would drop a lock. */
  private static final List<FileChannel> KEPT_OPEN = new ArrayList<>();

  private LockProbe() {}

  /** The holder as the lock file names it ("pid 1234", "pid 1234@host", or "unknown pid"). */
  static Optional<String> holder(Path lockFile) throws IOException {
    if (!Files.isRegularFile(lockFile)) {
      return Optional.empty();
    }
    FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.READ);
    try {
      FileLock lock = ch.tryLock(0, Long.MAX_VALUE, true);
      if (lock == null) {
        return Optional.of(describe(ch));
      }
      lock.release();
      return Optional.empty();
    } catch (OverlappingFileLockException e) {
      synchronized (KEPT_OPEN) {
        KEPT_OPEN.add(ch);
      }
      ch = null;
      return Optional.of("pid " + ProcessHandle.current().pid() + ", this process");
    } finally {
      if (ch != null) {
        ch.close();
      }
    }
  }

  /**
   * Fails with exit code {@link JournalToolsMain#IN_USE} when a running process holds any lock of
   * the folder, naming the holder and what to do instead.
   */
  static void refuseIfInUse(JournalFolder folder) throws IOException {
    for (Path lockFile : folder.lockFiles()) {
      Optional<String> holder = holder(lockFile);
      if (holder.isPresent()) {
        throw new ToolFailure(
            JournalToolsMain.IN_USE,
            folder.dir()
                + " is in use by a running "
                + "master ("
                + holder.get()
                + ", lock "
                + lockFile
                + "). Stop that master, or copy "
                + "the folder (cp -a "
                + folder.dir()
                + " /some/copy) and run the tool on the copy.");
      }
    }
  }

  private static String describe(FileChannel ch) {
    try {
      ByteBuffer buf = ByteBuffer.allocate(256);
      ch.read(buf, 0);
      String text = new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8).trim();
      return text.isEmpty() ? "unknown pid" : "pid " + text;
    } catch (IOException e) {
      return "unknown pid";
    }
  }
}
