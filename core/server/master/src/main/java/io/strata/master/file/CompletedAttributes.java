package io.strata.master.file;

import com.google.protobuf.ByteString;
import io.strata.proto.CommitNewFileRequest;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.journal.InodeEntry;
import java.util.Map;

/**
 * What a writer sets on a file as it completes it, beside its length: extended attributes
 * (replacing the file's, when any are given), the content's modification time (null: the time of
 * completion) and the mode, owner, group and access time it changed while writing (null:
 * unchanged). Set in the same journal entry as the completion, so that a file written and then
 * given its attributes (as tar does) costs one step and no reader sees it without them.
 */
public record CompletedAttributes(
    Map<String, ByteString> xattrs,
    Long modificationTimeNs,
    Integer mode,
    String owner,
    String group,
    Long accessTimeNs) {

  public CompletedAttributes {
    xattrs = Map.copyOf(xattrs);
  }

  /** Only extended attributes (none when empty). */
  public static CompletedAttributes of(Map<String, ByteString> xattrs) {
    return new CompletedAttributes(xattrs, null, null, null, null, null);
  }

  /** What a CompleteFile call asks for. */
  public static CompletedAttributes of(CompleteFileRequest r) {
    return new CompletedAttributes(
        r.getXattrsMap(),
        r.hasModificationTimeNs() ? r.getModificationTimeNs() : null,
        r.hasMode() ? r.getMode() & AttributeChange.MAX_MODE : null,
        r.hasOwner() && !r.getOwner().isEmpty() ? r.getOwner() : null,
        r.hasGroup() && !r.getGroup().isEmpty() ? r.getGroup() : null,
        r.hasAccessTimeNs() ? r.getAccessTimeNs() : null);
  }

  /** What a CommitNewFile call asks for beside the file's mode, owner and group. */
  public static CompletedAttributes of(CommitNewFileRequest r) {
    return new CompletedAttributes(
        r.getXattrsMap(),
        r.hasModificationTimeNs() ? r.getModificationTimeNs() : null,
        null,
        null,
        null,
        r.hasAccessTimeNs() ? r.getAccessTimeNs() : null);
  }

  /**
   * Sets these on a file completed at {@code nowNs}: its modification time (this one, or now), its
   * change time (now), and what else was given.
   */
  void applyTo(InodeEntry.Builder b, long nowNs) {
    InodeTimes.setModification(b, modificationTimeNs != null ? modificationTimeNs : nowNs);
    InodeTimes.changed(b, nowNs);
    if (!xattrs.isEmpty()) {
      b.clearXattrs().putAllXattrs(xattrs);
    }
    if (mode != null) {
      b.setMode(mode);
    }
    if (owner != null) {
      b.setOwner(owner);
    }
    if (group != null) {
      b.setGroup(group);
    }
    if (accessTimeNs != null) {
      b.setAccessTimeNs(accessTimeNs);
    }
  }
}
