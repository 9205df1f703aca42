package io.strata.journal;

import com.google.protobuf.InvalidProtocolBufferException;
import io.strata.proto.journal.JournalBatch;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;

/**
 * A Raft log entry as the master's journal uses it: a state-machine entry whose log data is a
 * {@link JournalBatch}, or one of Ratis's own entries (a group configuration, or metadata such as
 * the commit index).
 *
 * @param raft the entry as read from the segment
 * @param batch the journal batch of a state-machine entry, else null
 */
record LogEntry(LogEntryProto raft, JournalBatch batch) {
  /** What an entry is, as dumps name it. */
  enum Type {
    BATCH,
    CONFIGURATION,
    METADATA,
    OTHER;

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * Decodes the journal batch of a state-machine entry.
   *
   * @throws JournalDamage when the log data is not a JournalBatch
   */
  static LogEntry decode(SegmentFile segment, LogEntryProto raft, long offset)
      throws JournalDamage {
    if (!raft.hasStateMachineLogEntry()) {
      return new LogEntry(raft, null);
    }
    try {
      return new LogEntry(
          raft,
          JournalBatch.parseFrom(
              raft.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer()));
    } catch (InvalidProtocolBufferException e) {
      throw new JournalDamage(
          segment.path(),
          offset,
          raft.getIndex(),
          "the entry's data is not a journal batch: " + e.getMessage(),
          e);
    }
  }

  Type type() {
    if (batch != null) {
      return Type.BATCH;
    }
    if (raft.hasConfigurationEntry()) {
      return Type.CONFIGURATION;
    }
    return raft.hasMetadataEntry() ? Type.METADATA : Type.OTHER;
  }

  long index() {
    return raft.getIndex();
  }

  /** Journal entries in this log entry (0 for Ratis's own entries). */
  int journalEntries() {
    return batch == null ? 0 : batch.getEntriesCount();
  }
}
