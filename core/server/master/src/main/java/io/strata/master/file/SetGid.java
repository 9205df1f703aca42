package io.strata.master.file;

import io.strata.proto.journal.InodeEntry;

/**
 * What a folder with the set-group-ID bit passes on, as Linux does: every new entry in it gets the
 * folder's group instead of its creator's, and a new subfolder gets the bit too, so a shared
 * project folder stays in its group all the way down. Stateless.
 */
final class SetGid {
  static final int S_ISGID = 02000;

  private SetGid() {}

  /** The group of a new entry in {@code parent} whose creator asked for {@code group}. */
  static String group(InodeEntry parent, String group) {
    return parent.getDirectory() && (parent.getMode() & S_ISGID) != 0 ? parent.getGroup() : group;
  }

  /** The mode of a new folder in {@code parent} asked with {@code mode} (not 0). */
  static int directoryMode(InodeEntry parent, int mode) {
    return parent.getDirectory() && (parent.getMode() & S_ISGID) != 0 ? mode | S_ISGID : mode;
  }
}
