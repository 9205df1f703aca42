package io.strata.fuse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process a FUSE request comes from, as the kernel reports it: files and directories it creates
 * are owned by this user and group, and the rules that depend on who asks (a chmod or a write by
 * someone outside a file's group drops its set-group-ID bit) use it.
 *
 * @param pid the process, whose supplementary groups {@link #inGroup} reads from /proc
 */
record Caller(long uid, long gid, long pid) {
  private static final int S_ISUID = 04000;
  private static final int S_ISGID = 02000;
  private static final int S_IXGRP = 0010;

  Caller(long uid, long gid) {
    this(uid, gid, 0);
  }

  boolean root() {
    return uid == 0;
  }

  /**
   * Whether the caller belongs to group {@code id}: its primary group, or one of the supplementary
   * groups /proc lists for its process (the FUSE request carries only the primary one). A process
   * gone meanwhile counts by its primary group only.
   */
  boolean inGroup(long id) {
    if (id == gid) {
      return true;
    }
    if (pid <= 0) {
      return false;
    }
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("Groups:")) {
          for (String g : line.substring("Groups:".length()).trim().split("\\s+")) {
            if (!g.isEmpty() && Long.parseLong(g) == id) {
              return true;
            }
          }
          return false;
        }
      }
    } catch (IOException | RuntimeException e) {
      // The process ended: judged by its primary group.
    }
    return false;
  }

  /**
   * The mode a chmod by this caller sets when it asks for {@code mode} on a file of group {@code
   * fileGid}: as Linux does, the set-group-ID bit is dropped, silently, unless the caller is root
   * or in that group.
   */
  int chmodMode(int mode, long fileGid) {
    return (mode & S_ISGID) != 0 && !root() && !inGroup(fileGid) ? mode & ~S_ISGID : mode;
  }

  /**
   * The mode a file keeps once this caller wrote or truncated it, as Linux kills privileges: anyone
   * but root drops set-user-ID; set-group-ID goes with it when the group may execute, or when the
   * caller is not in the file's group. The same mode when nothing changes.
   */
  int modeAfterWrite(int mode, long fileGid) {
    if ((mode & (S_ISUID | S_ISGID)) == 0 || root()) {
      return mode;
    }
    int after = mode & ~S_ISUID;
    if ((mode & S_ISGID) != 0 && ((mode & S_IXGRP) != 0 || !inGroup(fileGid))) {
      after &= ~S_ISGID;
    }
    return after;
  }
}
