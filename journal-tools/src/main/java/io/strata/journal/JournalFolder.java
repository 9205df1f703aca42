package io.strata.journal;

import io.strata.master.journal.HeaderFile;
import io.strata.server.common.FolderLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The folder a tool was given: a master's journal folder ({@code raft/<group-uuid>/current/} with
 * the Raft log, {@code raft/<group-uuid>/sm/<term>_<index>/} with the snapshots) or a single backup
 * or snapshot folder ({@code HEADER} and {@code db/}). Listing only; nothing here reads file
 * contents.
 */
final class JournalFolder {
  static final String RAFT = "raft";

  /** Ratis's state-machine folder in a group's folder. */
  static final String STATE_MACHINE = "sm";

  private static final Pattern UUID_NAME =
      Pattern.compile(
          "\\p{XDigit}{8}-\\p{XDigit}{4}-\\p{XDigit}{4}-\\p{XDigit}{4}-\\p{XDigit}{12}");

  private final Path dir;
  private final boolean standalone;

  private JournalFolder(Path dir, boolean standalone) {
    this.dir = dir;
    this.standalone = standalone;
  }

  /** Recognises the folder, failing with a usage error when it is neither kind. */
  static JournalFolder of(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new ToolFailure(JournalToolsMain.USAGE, dir + " is not a folder");
    }
    if (Files.isDirectory(dir.resolve(RAFT))) {
      return new JournalFolder(dir, false);
    }
    if (Files.exists(dir.resolve(HeaderFile.NAME))
        || Files.isDirectory(dir.resolve(StateFolder.DB))) {
      return new JournalFolder(dir, true);
    }
    throw new ToolFailure(
        JournalToolsMain.USAGE,
        dir
            + " is neither a master journal folder "
            + "(with raft/; see strata.master.journal.dir) nor a backup folder "
            + "(with HEADER and db/)");
  }

  Path dir() {
    return dir;
  }

  /** Whether this is a single backup or snapshot folder rather than a journal folder. */
  boolean standalone() {
    return standalone;
  }

  /** The Raft groups' logs, by group id (a master has one). */
  List<GroupLog> groups() throws IOException {
    List<GroupLog> groups = new ArrayList<>();
    for (Path p : groupFolders()) {
      groups.add(GroupLog.of(p));
    }
    groups.sort(Comparator.comparing(GroupLog::id));
    return groups;
  }

  /** Snapshots ordered by Raft index, oldest first; for a standalone folder, the folder. */
  List<StateFolder> states() throws IOException {
    if (standalone) {
      return List.of(StateFolder.standalone(dir));
    }
    List<Path> roots = new ArrayList<>();
    for (Path group : groupFolders()) {
      roots.add(group.resolve(STATE_MACHINE));
    }
    List<StateFolder> states = new ArrayList<>();
    for (Path root : roots) {
      for (Path p : subfolders(root)) {
        StateFolder s = StateFolder.snapshot(p);
        if (s != null) {
          states.add(s);
        }
      }
    }
    states.sort(Comparator.comparingLong(StateFolder::index).thenComparingLong(StateFolder::term));
    return states;
  }

  /** Lock files a running master holds: its folder lock and each Raft group's lock. */
  List<Path> lockFiles() throws IOException {
    List<Path> locks = new ArrayList<>();
    locks.add(dir.resolve(FolderLock.LOCK_FILE));
    for (Path p : groupFolders()) {
      locks.add(p.resolve(GroupLog.RATIS_LOCK));
    }
    return locks;
  }

  /** Ratis names a group's folder after the group id, a UUID. */
  private List<Path> groupFolders() throws IOException {
    List<Path> groups = new ArrayList<>();
    for (Path p : subfolders(dir.resolve(RAFT))) {
      if (UUID_NAME.matcher(p.getFileName().toString()).matches()) {
        groups.add(p);
      }
    }
    return groups;
  }

  private static List<Path> subfolders(Path parent) throws IOException {
    List<Path> dirs = new ArrayList<>();
    if (Files.isDirectory(parent)) {
      try (Stream<Path> list = Files.list(parent)) {
        list.filter(Files::isDirectory).forEach(dirs::add);
      }
    }
    return dirs;
  }
}
