package io.strata.journal;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A journal file that cannot be read as written: the message names the file and, when known, the
 * byte offset and the Raft index where reading stopped.
 */
final class JournalDamage extends IOException {
  private final Path file;
  private final long offset;
  private final long index;

  /**
   * @param offset byte offset in the file, or -1 when unknown
   * @param index Raft index of the entry, or -1 when none applies
   */
  JournalDamage(Path file, long offset, long index, String reason, Throwable cause) {
    super(
        file
            + (offset >= 0 ? " at offset " + offset : "")
            + (index >= 0 ? " (entry index " + index + ")" : "")
            + ": "
            + reason,
        cause);
    this.file = file;
    this.offset = offset;
    this.index = index;
  }

  /** Damage whose message already names the file. */
  JournalDamage(Path file, String message, Throwable cause) {
    super(message, cause);
    this.file = file;
    this.offset = -1;
    this.index = -1;
  }

  JournalDamage(Path file, long offset, long index, String reason) {
    this(file, offset, index, reason, null);
  }

  Path file() {
    return file;
  }

  long offset() {
    return offset;
  }

  long index() {
    return index;
  }
}
