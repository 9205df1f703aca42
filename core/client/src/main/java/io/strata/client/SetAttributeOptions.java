package io.strata.client;

import com.google.protobuf.ByteString;
import io.strata.proto.TtlAction;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * What {@link FileSystem#setAttribute} changes: any of mode, owner, group, modification time,
 * extended attributes and time to live; what is not given stays as it is, and at least one
 * must be given. Immutable: each setter returns a copy. The setters refuse what the master
 * would refuse (a mode outside 07777, an empty or null name, a time to live that is not
 * positive), so a mistake fails where it is made.
 */
public final class SetAttributeOptions {
  private static final SetAttributeOptions DEFAULTS =
      new SetAttributeOptions(OptionalInt.empty(), Optional.empty(), Optional.empty(),
          OptionalLong.empty(), Map.of(), List.of(), OptionalLong.empty(),
          TtlAction.TTL_ACTION_FREE);

  private final OptionalInt mode;
  private final Optional<String> owner;
  private final Optional<String> group;
  private final OptionalLong modificationTimeMs;
  private final Map<String, ByteString> setXattrs;
  private final List<String> removeXattrs;
  private final OptionalLong ttlMs;
  private final TtlAction ttlAction;

  private SetAttributeOptions(OptionalInt mode, Optional<String> owner, Optional<String> group,
      OptionalLong modificationTimeMs, Map<String, ByteString> setXattrs,
      List<String> removeXattrs, OptionalLong ttlMs, TtlAction ttlAction) {
    this.mode = mode;
    this.owner = owner;
    this.group = group;
    this.modificationTimeMs = modificationTimeMs;
    this.setXattrs = setXattrs;
    this.removeXattrs = removeXattrs;
    this.ttlMs = ttlMs;
    this.ttlAction = ttlAction;
  }

  /** Nothing to change yet. */
  public static SetAttributeOptions defaults() {
    return DEFAULTS;
  }

  /** New POSIX permission bits, 0 to 07777 (setuid, setgid and sticky included). */
  public SetAttributeOptions mode(int value) {
    if (value < 0 || value > 07777) {
      throw new IllegalArgumentException("mode must be between 0 and 07777: "
          + String.format("0%o", value));
    }
    return new SetAttributeOptions(OptionalInt.of(value), owner, group, modificationTimeMs,
        setXattrs, removeXattrs, ttlMs, ttlAction);
  }

  /** A new owner (a user name). */
  public SetAttributeOptions owner(String value) {
    return new SetAttributeOptions(mode, Optional.of(name(value, "owner")), group,
        modificationTimeMs, setXattrs, removeXattrs, ttlMs, ttlAction);
  }

  /** A new group (a group name). */
  public SetAttributeOptions group(String value) {
    return new SetAttributeOptions(mode, owner, Optional.of(name(value, "group")),
        modificationTimeMs, setXattrs, removeXattrs, ttlMs, ttlAction);
  }

  /** A new modification time, in milliseconds since the epoch. */
  public SetAttributeOptions modificationTimeMs(long value) {
    return new SetAttributeOptions(mode, owner, group, OptionalLong.of(value), setXattrs,
        removeXattrs, ttlMs, ttlAction);
  }

  /** These options, also setting an extended attribute (added, or replacing its value). */
  public SetAttributeOptions xattr(String name, ByteString value) {
    Map<String, ByteString> set = new LinkedHashMap<>(setXattrs);
    set.put(name(name, "extended attribute"), value);
    return new SetAttributeOptions(mode, owner, group, modificationTimeMs, Map.copyOf(set),
        removeXattrs, ttlMs, ttlAction);
  }

  /** These options, also removing an extended attribute (nothing when it is not there). */
  public SetAttributeOptions removeXattr(String name) {
    LinkedHashSet<String> remove = new LinkedHashSet<>(removeXattrs);
    remove.add(name(name, "extended attribute"));
    return new SetAttributeOptions(mode, owner, group, modificationTimeMs, setXattrs,
        List.copyOf(remove), ttlMs, ttlAction);
  }

  /**
   * A time to live: once {@code ttl} has passed since the path's modification time, the
   * master frees its cached blocks ({@code TTL_ACTION_FREE}, then the time to live is removed)
   * or deletes it, with everything below a directory, from Strata and the under store
   * ({@code TTL_ACTION_DELETE}). Needs a cluster at metadata layout 2 (the master refuses it
   * with FAILED_PRECONDITION before {@code strata fsadmin upgrade finalize}).
   */
  public SetAttributeOptions ttl(Duration ttl, TtlAction action) {
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("a time to live must be positive: " + ttl);
    }
    if (action == null || action == TtlAction.UNRECOGNIZED) {
      throw new IllegalArgumentException("a time to live needs an action: free or delete");
    }
    return new SetAttributeOptions(mode, owner, group, modificationTimeMs, setXattrs,
        removeXattrs, OptionalLong.of(ttl.toMillis()), action);
  }

  /** Removes the time to live (nothing when there is none). */
  public SetAttributeOptions noTtl() {
    return new SetAttributeOptions(mode, owner, group, modificationTimeMs, setXattrs,
        removeXattrs, OptionalLong.of(0), TtlAction.TTL_ACTION_FREE);
  }

  private static String name(String value, String what) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(what + " must be a non-empty name");
    }
    return value;
  }

  public OptionalInt mode() {
    return mode;
  }

  public Optional<String> owner() {
    return owner;
  }

  public Optional<String> group() {
    return group;
  }

  public OptionalLong modificationTimeMs() {
    return modificationTimeMs;
  }

  /** Extended attributes to set. */
  public Map<String, ByteString> setXattrs() {
    return setXattrs;
  }

  /** Names of extended attributes to remove. */
  public List<String> removeXattrs() {
    return removeXattrs;
  }

  /** The time to live in ms to set; 0 removes it; empty leaves it as it is. */
  public OptionalLong ttlMs() {
    return ttlMs;
  }

  /** What happens once the time to live has passed (meaningful when one is set). */
  public TtlAction ttlAction() {
    return ttlAction;
  }

  /** Whether nothing is given (the master refuses such a change). */
  public boolean isEmpty() {
    return mode.isEmpty() && owner.isEmpty() && group.isEmpty() && modificationTimeMs.isEmpty()
        && setXattrs.isEmpty() && removeXattrs.isEmpty() && ttlMs.isEmpty();
  }

  @Override
  public String toString() {
    return "SetAttributeOptions{mode=" + (mode.isPresent() ? String.format("0%o",
        mode.getAsInt()) : "-") + ", owner=" + owner.orElse("-") + ", group="
        + group.orElse("-") + ", modificationTimeMs="
        + (modificationTimeMs.isPresent() ? modificationTimeMs.getAsLong() : "-")
        + ", setXattrs=" + setXattrs.keySet() + ", removeXattrs=" + removeXattrs + ", ttlMs="
        + (ttlMs.isPresent() ? ttlMs.getAsLong() + " (" + ttlAction + ")" : "-") + "}";
  }
}
