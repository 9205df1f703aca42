package io.strata.journal;

import io.strata.common.Version;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * Checks one snapshot or backup: its HEADER is whole (checksum), of the expected kind, of a format
 * this release reads and agrees with the folder name; its database opens, every block of every SST
 * file matches its checksum, and its last applied sequence and inode count are the header's. Works
 * on a {@link ScratchCopy}, so the folder is only read.
 */
final class StateCheck {
  /**
   * What the check found.
   *
   * @param header the header when it could be read, else null
   * @param problems what is wrong, each naming the file; empty when the folder is sound
   */
  record Result(StateFolder state, JournalHeader header, List<String> problems) {
    boolean sound() {
      return problems.isEmpty();
    }
  }

  static {
    RocksDB.loadLibrary();
  }

  private StateCheck() {}

  static Result check(StateFolder state, boolean standalone, Path scratchRoot) {
    List<String> problems = new ArrayList<>();
    JournalHeader header = null;
    try {
      header = state.readHeader();
      checkHeader(state, standalone, header, problems);
    } catch (IOException e) {
      problems.add(e.getMessage());
    }
    Path db = state.db();
    if (!Files.isRegularFile(db.resolve("CURRENT"))) {
      problems.add(db + ": no database here (db/CURRENT is missing)");
      return new Result(state, header, problems);
    }
    try (ScratchCopy copy = ScratchCopy.of(db, scratchRoot)) {
      try {
        verifyChecksums(copy.db());
      } catch (RocksDBException e) {
        problems.add(db + ": " + inOriginal(e.getMessage(), copy.db(), db));
        return new Result(state, header, problems);
      }
      try (InodeStore store = copy.open()) {
        if (header != null && store.appliedSequence() != header.getFirstSequence()) {
          problems.add(
              db
                  + ": the database's last applied sequence is "
                  + store.appliedSequence()
                  + " where "
                  + state.header()
                  + " says "
                  + header.getFirstSequence());
        }
        if (header != null && store.inodeCount() != header.getInodeCount()) {
          problems.add(
              db
                  + ": the database holds "
                  + store.inodeCount()
                  + " inodes where "
                  + state.header()
                  + " says "
                  + header.getInodeCount());
        }
      }
    } catch (IOException | RuntimeException e) {
      problems.add(db + ": cannot open the database: " + e.getMessage());
    }
    return new Result(state, header, problems);
  }

  private static void checkHeader(
      StateFolder state, boolean standalone, JournalHeader h, List<String> problems) {
    Path file = state.header();
    boolean kindOk =
        standalone
            ? h.getKind().equals(StateFolder.SNAPSHOT) || h.getKind().equals(StateFolder.BACKUP)
            : h.getKind().equals(state.kind());
    if (!kindOk) {
      problems.add(
          file + ": a '" + h.getKind() + "' header where a '" + state.kind() + "' was expected");
    }
    int format = h.getFormatVersion();
    if (format < 1) {
      problems.add(file + ": no metadata layout version (" + format + ")");
    } else if (format > Version.LAYOUT_VERSION) {
      problems.add(
          file
              + ": metadata layout "
              + format
              + " (written by release "
              + h.getRelease()
              + ") is newer than this release ("
              + Version.RELEASE
              + ") reads (up to "
              + Version.LAYOUT_VERSION
              + "); use the tools of release "
              + h.getRelease()
              + " or newer");
    }
    if (state.index() >= 0 && state.index() != h.getRaftIndex()) {
      problems.add(
          file
              + ": raft index "
              + h.getRaftIndex()
              + " where the folder name says "
              + state.index());
    }
    if (state.term() >= 0 && state.term() != h.getRaftTerm()) {
      problems.add(
          file + ": raft term " + h.getRaftTerm() + " where the folder name says " + state.term());
    }
  }

  /** Reads every block of every SST file of the database and checks its checksum. */
  private static void verifyChecksums(Path db) throws RocksDBException {
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    List<ColumnFamilyDescriptor> families = new ArrayList<>();
    try (Options options = new Options()) {
      for (byte[] name : RocksDB.listColumnFamilies(options, db.toString())) {
        families.add(new ColumnFamilyDescriptor(name));
      }
    }
    try (DBOptions options = new DBOptions().setParanoidChecks(true);
        RocksDB rocks = RocksDB.openReadOnly(options, db.toString(), families, handles)) {
      try {
        rocks.verifyChecksum();
      } finally {
        handles.forEach(ColumnFamilyHandle::close);
      }
    }
  }

  /** RocksDB names files of the scratch copy; the user needs the original's. */
  private static String inOriginal(String message, Path copy, Path original) {
    return message == null ? "damaged" : message.replace(copy.toString(), original.toString());
  }
}
