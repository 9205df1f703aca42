package io.strata.server.common;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An exclusive lock on a folder that a server owns (a master's journal, a worker's tier), held for
 * the life of the process so that a second process started on the same folder fails at once instead
 * of rewriting state under the first one. The lock is an OS file lock on {@code <folder>/.lock}, so
 * it disappears when the process dies, even by kill -9; the file also records the holder's pid for
 * the error message.
 */
public final class FolderLock implements AutoCloseable {
  public static final String LOCK_FILE = ".lock";

  private final FileChannel channel;
  private final FileLock lock;

  private FolderLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Locks a folder, creating it if needed.
   *
   * @param what who uses the folder, for the error ("master journal")
   * @param key the configuration key that names the folder, for the error
   * @throws IOException naming the folder, the holder's pid and the fix when it is locked
   */
  public static FolderLock acquire(Path folder, String what, String key) throws IOException {
    Files.createDirectories(folder);
    Path file = folder.resolve(LOCK_FILE);
    FileChannel ch =
        FileChannel.open(
            file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = ch.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null;
    }
    if (lock == null) {
      String holder = readHolder(ch);
      ch.close();
      throw new IOException(
          "The "
              + what
              + " folder "
              + folder
              + " is in use by another "
              + "process"
              + (holder.isEmpty() ? "" : " (pid " + holder + ")")
              + ": stop it first, or set "
              + key
              + " to another folder");
    }
    ch.truncate(0);
    ch.write(
        ByteBuffer.wrap(
            Long.toString(ProcessHandle.current().pid()).getBytes(StandardCharsets.US_ASCII)),
        0);
    return new FolderLock(ch, lock);
  }

  private static String readHolder(FileChannel ch) {
    try {
      ByteBuffer buf = ByteBuffer.allocate(32);
      ch.read(buf, 0);
      return new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).trim();
    } catch (IOException e) {
      return "";
    }
  }

  @Override
  public void close() throws IOException {
    try {
      lock.release();
    } finally {
      channel.close();
    }
  }
}
