package io.strata.journal;

import io.strata.master.journal.HeaderFile;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A copy of the master's metastore with the journal position it reflects: a snapshot ({@code
 * snapshots/<term>_<index>/}) or a backup ({@code backup-<yyyyMMdd-HHmmss>-<index>/}). Either holds
 * {@code db/}, a RocksDB checkpoint, and {@code HEADER}, one record holding a {@link
 * JournalHeader}, read and written by the master's {@link HeaderFile}.
 *
 * @param dir the folder
 * @param kind the header kind the folder must carry: "snapshot" or "backup"
 * @param term Raft term from the folder name, or -1 when the name does not carry it
 * @param index Raft index from the folder name, or -1 when the name does not carry it
 */
record StateFolder(Path dir, String kind, long term, long index) {
  static final String SNAPSHOT = "snapshot";
  static final String BACKUP = "backup";
  static final String DB = "db";
  private static final Pattern SNAPSHOT_NAME = Pattern.compile("(\\d+)_(\\d+)");
  private static final Pattern BACKUP_NAME = Pattern.compile("backup-\\d{8}-\\d{6}-(\\d+)");

  /** The snapshot in a folder of {@code snapshots/}, or null when the name is not one. */
  static StateFolder snapshot(Path dir) {
    Matcher m = SNAPSHOT_NAME.matcher(dir.getFileName().toString());
    return m.matches()
        ? new StateFolder(dir, SNAPSHOT, Long.parseLong(m.group(1)), Long.parseLong(m.group(2)))
        : null;
  }

  /**
   * A folder passed on its own: a backup (the index comes from its name when it has the name {@code
   * strata fsadmin backup} gives), or a snapshot folder copied out of a journal.
   */
  static StateFolder standalone(Path dir) {
    StateFolder snapshot = snapshot(dir);
    if (snapshot != null) {
      return snapshot;
    }
    Matcher m = BACKUP_NAME.matcher(dir.getFileName().toString());
    return new StateFolder(dir, BACKUP, -1, m.matches() ? Long.parseLong(m.group(1)) : -1);
  }

  Path header() {
    return dir.resolve(HeaderFile.NAME);
  }

  Path db() {
    return dir.resolve(DB);
  }

  /**
   * Reads and checks the header record.
   *
   * @throws JournalDamage naming the header file when it is missing or damaged
   */
  JournalHeader readHeader() throws JournalDamage {
    Path file = header();
    if (!Files.isRegularFile(file)) {
      throw new JournalDamage(file, -1, -1, "the header file is missing");
    }
    try {
      return HeaderFile.read(file);
    } catch (IOException e) {
      // The master's message names the file already.
      throw new JournalDamage(file, e.getMessage(), e);
    }
  }

  String name() {
    return kind + " " + dir.getFileName();
  }
}
