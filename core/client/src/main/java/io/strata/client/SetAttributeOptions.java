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
 * What {@link FileSystem#setAttribute} changes: any of mode, owner, group, modification and access
 * times, extended attributes and time to live; what is not given stays as it is, and at least one
 * must be given. Immutable: each setter returns a copy. The setters refuse what the master would
 * refuse (a mode outside 07777, an empty or null name, a time to live that is not positive), so a
 * mistake fails where it is made.
 */
public final class SetAttributeOptions {
  /** Every value, so that each setter changes one and copies the rest. */
  private record Values(
      OptionalInt mode,
      Optional<String> owner,
      Optional<String> group,
      OptionalLong modificationTimeMs,
      OptionalLong modificationTimeNs,
      OptionalLong accessTimeNs,
      Map<String, ByteString> setXattrs,
      List<String> removeXattrs,
      OptionalLong ttlMs,
      TtlAction ttlAction) {}

  private static final SetAttributeOptions DEFAULTS =
      new SetAttributeOptions(
          new Values(
              OptionalInt.empty(),
              Optional.empty(),
              Optional.empty(),
              OptionalLong.empty(),
              OptionalLong.empty(),
              OptionalLong.empty(),
              Map.of(),
              List.of(),
              OptionalLong.empty(),
              TtlAction.TTL_ACTION_FREE));

  private final Values v;

  private SetAttributeOptions(Values v) {
    this.v = v;
  }

  /** Nothing to change yet. */
  public static SetAttributeOptions defaults() {
    return DEFAULTS;
  }

  /** New POSIX permission bits, 0 to 07777 (setuid, setgid and sticky included). */
  public SetAttributeOptions mode(int value) {
    if (value < 0 || value > 07777) {
      throw new IllegalArgumentException(
          "mode must be between 0 and 07777: " + String.format("0%o", value));
    }
    return new SetAttributeOptions(
        new Values(
            OptionalInt.of(value),
            v.owner,
            v.group,
            v.modificationTimeMs,
            v.modificationTimeNs,
            v.accessTimeNs,
            v.setXattrs,
            v.removeXattrs,
            v.ttlMs,
            v.ttlAction));
  }

  /** A new owner (a user name). */
  public SetAttributeOptions owner(String value) {
    return new SetAttributeOptions(
        new Values(
            v.mode,
            Optional.of(name(value, "owner")),
            v.group,
            v.modificationTimeMs,
            v.modificationTimeNs,
            v.accessTimeNs,
            v.setXattrs,
            v.removeXattrs,
            v.ttlMs,
            v.ttlAction));
  }

  /** A new group (a group name). */
  public SetAttributeOptions group(String value) {
    return new SetAttributeOptions(
        new Values(
            v.mode,
            v.owner,
            Optional.of(name(value, "group")),
            v.modificationTimeMs,
            v.modificationTimeNs,
            v.accessTimeNs,
            v.setXattrs,
            v.removeXattrs,
            v.ttlMs,
            v.ttlAction));
  }

  /** A new modification time, in milliseconds since the epoch. */
  public SetAttributeOptions modificationTimeMs(long value) {
    return new SetAttributeOptions(
        new Values(
            v.mode,
            v.owner,
            v.group,
            OptionalLong.of(value),
            v.modificationTimeNs,
            v.accessTimeNs,
            v.setXattrs,
            v.removeXattrs,
            v.ttlMs,
            v.ttlAction));
  }

  /**
   * A new modification time, in nanoseconds since the epoch (a master of release 0.1.0 keeps
   * milliseconds only: give {@link #modificationTimeMs} too for it).
   */
  public SetAttributeOptions modificationTimeNs(long value) {
    return new SetAttributeOptions(
        new Values(
            v.mode,
            v.owner,
            v.group,
            v.modificationTimeMs,
            OptionalLong.of(value),
            v.accessTimeNs,
            v.setXattrs,
            v.removeXattrs,
            v.ttlMs,
            v.ttlAction));
  }

  /** A new access time, in nanoseconds since the epoch. */
  public SetAttributeOptions accessTimeNs(long value) {
    return new SetAttributeOptions(
        new Values(
            v.mode,
            v.owner,
            v.group,
            v.modificationTimeMs,
            v.modificationTimeNs,
            OptionalLong.of(value),
            v.setXattrs,
            v.removeXattrs,
            v.ttlMs,
            v.ttlAction));
  }

  /** These options, also setting an extended attribute (added, or replacing its value). */
  public SetAttributeOptions xattr(String name, ByteString value) {
    Map<String, ByteString> set = new LinkedHashMap<>(v.setXattrs);
    set.put(name(name, "extended attribute"), value);
    return new SetAttributeOptions(
        new Values(
            v.mode,
            v.owner,
            v.group,
            v.modificationTimeMs,
            v.modificationTimeNs,
            v.accessTimeNs,
            Map.copyOf(set),
            v.removeXattrs,
            v.ttlMs,
            v.ttlAction));
  }

  /** These options, also removing an extended attribute (nothing when it is not there). */
  public SetAttributeOptions removeXattr(String name) {
    LinkedHashSet<String> remove = new LinkedHashSet<>(v.removeXattrs);
    remove.add(name(name, "extended attribute"));
    return new SetAttributeOptions(
        new Values(
            v.mode,
            v.owner,
            v.group,
            v.modificationTimeMs,
            v.modificationTimeNs,
            v.accessTimeNs,
            v.setXattrs,
            List.copyOf(remove),
            v.ttlMs,
            v.ttlAction));
  }

  /**
   * A time to live: once {@code ttl} has passed since the path's modification time, the master
   * frees its cached blocks ({@code TTL_ACTION_FREE}, then the time to live is removed) or deletes
   * it, with everything below a directory, from Strata and the under store ({@code
   * TTL_ACTION_DELETE}). Needs a cluster at metadata layout 2 (the master refuses it with
   * FAILED_PRECONDITION before {@code strata fsadmin upgrade finalize}).
   */
  public SetAttributeOptions ttl(Duration ttl, TtlAction action) {
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("a time to live must be positive: " + ttl);
    }
    if (action == null || action == TtlAction.UNRECOGNIZED) {
      throw new IllegalArgumentException("a time to live needs an action: free or delete");
    }
    return new SetAttributeOptions(
        new Values(
            v.mode,
            v.owner,
            v.group,
            v.modificationTimeMs,
            v.modificationTimeNs,
            v.accessTimeNs,
            v.setXattrs,
            v.removeXattrs,
            OptionalLong.of(ttl.toMillis()),
            action));
  }

  /** Removes the time to live (nothing when there is none). */
  public SetAttributeOptions noTtl() {
    return new SetAttributeOptions(
        new Values(
            v.mode,
            v.owner,
            v.group,
            v.modificationTimeMs,
            v.modificationTimeNs,
            v.accessTimeNs,
            v.setXattrs,
            v.removeXattrs,
            OptionalLong.of(0),
            TtlAction.TTL_ACTION_FREE));
  }

  private static String name(String value, String what) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(what + " must be a non-empty name");
    }
    return value;
  }

  public OptionalInt mode() {
    return v.mode;
  }

  public Optional<String> owner() {
    return v.owner;
  }

  public Optional<String> group() {
    return v.group;
  }

  public OptionalLong modificationTimeMs() {
    return v.modificationTimeMs;
  }

  public OptionalLong modificationTimeNs() {
    return v.modificationTimeNs;
  }

  public OptionalLong accessTimeNs() {
    return v.accessTimeNs;
  }

  /** Extended attributes to set. */
  public Map<String, ByteString> setXattrs() {
    return v.setXattrs;
  }

  /** Names of extended attributes to remove. */
  public List<String> removeXattrs() {
    return v.removeXattrs;
  }

  /** The time to live in ms to set; 0 removes it; empty leaves it as it is. */
  public OptionalLong ttlMs() {
    return v.ttlMs;
  }

  /** What happens once the time to live has passed (meaningful when one is set). */
  public TtlAction ttlAction() {
    return v.ttlAction;
  }

  /** Whether nothing is given (the master refuses such a change). */
  public boolean isEmpty() {
    return v.mode.isEmpty()
        && v.owner.isEmpty()
        && v.group.isEmpty()
        && v.modificationTimeMs.isEmpty()
        && v.modificationTimeNs.isEmpty()
        && v.accessTimeNs.isEmpty()
        && v.setXattrs.isEmpty()
        && v.removeXattrs.isEmpty()
        && v.ttlMs.isEmpty();
  }

  @Override
  public String toString() {
    return "SetAttributeOptions{mode="
        + (v.mode.isPresent() ? String.format("0%o", v.mode.getAsInt()) : "-")
        + ", owner="
        + v.owner.orElse("-")
        + ", group="
        + v.group.orElse("-")
        + ", modificationTimeMs="
        + text(v.modificationTimeMs)
        + ", modificationTimeNs="
        + text(v.modificationTimeNs)
        + ", accessTimeNs="
        + text(v.accessTimeNs)
        + ", setXattrs="
        + v.setXattrs.keySet()
        + ", removeXattrs="
        + v.removeXattrs
        + ", ttlMs="
        + (v.ttlMs.isPresent() ? v.ttlMs.getAsLong() + " (" + v.ttlAction + ")" : "-")
        + "}";
  }

  private static String text(OptionalLong value) {
    return value.isPresent() ? Long.toString(value.getAsLong()) : "-";
  }
}
