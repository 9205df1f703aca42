package io.strata.master.file;

import com.google.protobuf.ByteString;
import io.strata.common.error.StrataException;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.TtlAction;
import io.strata.proto.journal.InodeEntry;
import java.util.List;
import java.util.Map;

/**
 * A change of the attributes Strata keeps in its namespace only -- mode, owner, group, modification
 * time, extended attributes and time to live -- as a SetAttribute call asks for it. A null
 * component is left as it is. {@link #check} guarantees at least one component is given, the mode
 * holds permission bits only (0 to 07777), a name given is not empty, extended attribute names are
 * valid and a time to live is not negative with a known action; {@link #applyTo} touches nothing
 * else of an inode, so its id, blocks, length and under-store fingerprint stay. Immutable.
 *
 * @param mode new permission bits, or null
 * @param owner new owner, or null
 * @param group new group, or null
 * @param modificationTimeMs new modification time in ms since the epoch, or null
 * @param setXattrs extended attributes to add or replace (empty: none)
 * @param removeXattrs names of extended attributes to remove (empty: none); a name also in {@code
 *     setXattrs} is set
 * @param ttl new time to live, or null
 * @param accessTimeNs new access time in ns since the epoch, or null
 * @param modificationTimeNs new modification time in ns since the epoch, or null; it wins over
 *     {@code modificationTimeMs}
 */
public record AttributeChange(
    Integer mode,
    String owner,
    String group,
    Long modificationTimeMs,
    Map<String, ByteString> setXattrs,
    List<String> removeXattrs,
    Ttl ttl,
    Long accessTimeNs,
    Long modificationTimeNs) {

  /**
   * A time to live: {@code ms} after the inode's modification time the master acts on it as {@code
   * action} says. {@code ms} 0 removes the time to live.
   */
  public record Ttl(long ms, TtlAction action) {
    /** Whether this removes the time to live instead of setting one. */
    public boolean clears() {
      return ms == 0;
    }
  }

  public AttributeChange {
    setXattrs = Map.copyOf(setXattrs);
    removeXattrs = List.copyOf(removeXattrs);
  }

  /** A change of mode, owner, group and/or modification time only. */
  public AttributeChange(Integer mode, String owner, String group, Long modificationTimeMs) {
    this(mode, owner, group, modificationTimeMs, Map.of(), List.of(), null, null, null);
  }

  /** The largest mode: permission bits with setuid, setgid and sticky. */
  public static final int MAX_MODE = 07777;

  /** The change a request asks for; a field the request leaves unset stays null. */
  public static AttributeChange of(SetAttributeRequest r) {
    return new AttributeChange(
        r.hasMode() ? r.getMode() : null,
        r.hasOwner() ? r.getOwner() : null,
        r.hasGroup() ? r.getGroup() : null,
        r.hasModificationTimeMs() ? r.getModificationTimeMs() : null,
        r.getSetXattrsMap(),
        r.getRemoveXattrsList(),
        r.hasTtlMs() ? new Ttl(r.getTtlMs(), r.getTtlAction()) : null,
        r.hasAccessTimeNs() ? r.getAccessTimeNs() : null,
        r.hasModificationTimeNs() ? r.getModificationTimeNs() : null);
  }

  /**
   * Whether the change is a time to live that at most frees cached blocks (or removes one): such a
   * change never touches the under store, so a read-only mount takes it.
   */
  public boolean onlyFreesOnExpiry() {
    return !changesInode()
        && ttl != null
        && (ttl.clears() || ttl.action() == TtlAction.TTL_ACTION_FREE);
  }

  /**
   * Whether the change touches what POSIX counts as the inode's attributes (mode, owner, group,
   * times, extended attributes), which moves its change time even when the values stay.
   */
  public boolean changesInode() {
    return mode != null
        || owner != null
        || group != null
        || modificationTimeMs != null
        || accessTimeNs != null
        || modificationTimeNs != null
        || !setXattrs.isEmpty()
        || !removeXattrs.isEmpty();
  }

  /** Whether the change sets a time to live that deletes the path when it passes. */
  public boolean deletesOnExpiry() {
    return ttl != null && !ttl.clears() && ttl.action() == TtlAction.TTL_ACTION_DELETE;
  }

  /** Fails with INVALID_ARGUMENT, naming the path, when the change cannot be applied. */
  public void check(String path) throws StrataException {
    if (!changesInode() && ttl == null) {
      throw StrataException.invalidArgument(
          "Nothing to set on "
              + path
              + ": give at least one"
              + " of mode, owner, group, access or modification time, extended attributes, time to"
              + " live");
    }
    if (ttl != null && ttl.ms() < 0) {
      throw StrataException.invalidArgument(
          "Negative time to live "
              + ttl.ms()
              + " ms for "
              + path
              + ": give a positive duration, or 0 to remove the time to live");
    }
    if (ttl != null && ttl.action() == TtlAction.UNRECOGNIZED) {
      throw StrataException.invalidArgument(
          "Unknown time-to-live action for " + path + ": give free or delete");
    }
    Xattrs.checkNames(path, setXattrs.keySet());
    Xattrs.checkNames(path, removeXattrs);
    Xattrs.checkValues(path, setXattrs);
    if (mode != null && (mode < 0 || mode > MAX_MODE)) {
      throw StrataException.invalidArgument(
          "Bad mode "
              + String.format("0%o", mode)
              + " for "
              + path
              + ": give permission bits between 0 and 07777");
    }
    if (owner != null && owner.isEmpty()) {
      throw StrataException.invalidArgument(
          "Empty owner for " + path + ": give a user name, or leave the owner unset to keep it");
    }
    if (group != null && group.isEmpty()) {
      throw StrataException.invalidArgument(
          "Empty group for " + path + ": give a group name, or leave the group unset to keep it");
    }
  }

  /** The inode with this change applied; every other field as it was. */
  public InodeEntry.Builder applyTo(InodeEntry n) {
    InodeEntry.Builder b = n.toBuilder();
    if (mode != null) {
      b.setMode(mode);
    }
    if (owner != null) {
      b.setOwner(owner);
    }
    if (group != null) {
      b.setGroup(group);
    }
    if (modificationTimeNs != null) {
      InodeTimes.setModification(b, modificationTimeNs);
    } else if (modificationTimeMs != null) {
      InodeTimes.setModification(b, modificationTimeMs * 1_000_000L);
    }
    if (accessTimeNs != null) {
      b.setAccessTimeNs(accessTimeNs);
    }
    for (String name : removeXattrs) {
      b.removeXattrs(name);
    }
    b.putAllXattrs(setXattrs);
    if (ttl != null && ttl.clears()) {
      b.clearTtlMs().clearTtlAction();
    } else if (ttl != null) {
      b.setTtlMs(ttl.ms()).setTtlAction(ttl.action());
    }
    return b;
  }
}
