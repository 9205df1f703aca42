package io.strata.journal;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.protobuf.TextFormat;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.JournalHeader;
import java.time.Instant;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;

/**
 * How {@code strata journal dump} prints log entries: readable text, or one JSON object a line.
 *
 * <p>JSON lines: every line has {@code group}, {@code index}, {@code term} and {@code type} ({@code
 * batch}, {@code configuration}, {@code metadata}, {@code other}). A batch line holds {@code
 * batch}, the stored {@link JournalBatch} in the proto3 JSON mapping (so it parses back into the
 * same message), and {@code firstSequence}, the sequence its first entry got when applied, when the
 * dump can know it. A configuration line holds {@code peers} and {@code oldPeers}; a metadata line
 * {@code commitIndex}. Snapshot lines ({@code type} {@code snapshot}) carry the folder and its
 * header.
 */
final class EntryFormat {
  private static final TextFormat.Printer ONE_LINE = TextFormat.printer().emittingSingleLine(true);

  private EntryFormat() {}

  /** Text lines: one for the log entry, then one for each journal entry of a batch. */
  static String text(LogEntry e, long firstSequence) {
    LogEntryProto raft = e.raft();
    StringBuilder sb = new StringBuilder();
    sb.append("index ")
        .append(raft.getIndex())
        .append("  term ")
        .append(raft.getTerm())
        .append("  ")
        .append(e.type().label());
    switch (e.type()) {
      case BATCH -> {
        JournalBatch b = e.batch();
        sb.append("  ")
            .append(b.getEntriesCount())
            .append(b.getEntriesCount() == 1 ? " entry" : " entries");
        if (!b.getClientId().isEmpty()) {
          sb.append("  client ").append(b.getClientId()).append(" call ").append(b.getCallId());
        }
        if (b.getCallsCount() > 0) {
          // Layout 2: the changes of several calls in one log entry (group commit).
          sb.append("  ").append(b.getCallsCount()).append(" calls:");
          for (io.strata.proto.journal.BatchedCall c : b.getCallsList()) {
            sb.append(' ')
                .append(c.getEntryCount())
                .append(
                    c.getClientId().isEmpty()
                        ? " (master)"
                        : " (client " + c.getClientId() + " call " + c.getCallId() + ")");
          }
        }
        for (int i = 0; i < b.getEntriesCount(); i++) {
          JournalEntry entry = b.getEntries(i);
          sb.append("\n    ");
          sb.append(firstSequence > 0 ? "seq " + (firstSequence + i) : "seq ?")
              .append("  ")
              .append(entryType(entry))
              .append("  ");
          sb.append(ONE_LINE.printToString(entry));
        }
      }
      case CONFIGURATION -> {
        RaftConfigurationProto c = raft.getConfigurationEntry();
        sb.append("  peers ").append(peers(c.getPeersList()));
        if (c.getOldPeersCount() > 0) {
          sb.append("  old peers ").append(peers(c.getOldPeersList()));
        }
      }
      case METADATA ->
          sb.append("  commit index ").append(raft.getMetadataEntry().getCommitIndex());
      case OTHER -> sb.append("  ").append(raft.getLogEntryBodyCase());
    }
    return sb.toString();
  }

  /** The change an entry makes, by its oneof case; entries of a newer format show as unknown. */
  static String entryType(JournalEntry entry) {
    return entry.getEntryCase() == JournalEntry.EntryCase.ENTRY_NOT_SET
        ? "UNKNOWN(newer format?)"
        : entry.getEntryCase().name();
  }

  /** One JSON line for a log entry; {@code firstSequence} is left out when not above 0. */
  static String json(String group, LogEntry e, long firstSequence) {
    LogEntryProto raft = e.raft();
    JsonObject line = new JsonObject();
    line.addProperty("group", group);
    line.addProperty("index", raft.getIndex());
    line.addProperty("term", raft.getTerm());
    line.addProperty("type", e.type().label());
    switch (e.type()) {
      case BATCH -> {
        if (firstSequence > 0) {
          line.addProperty("firstSequence", firstSequence);
        }
        line.add("batch", json(e.batch()));
      }
      case CONFIGURATION -> {
        RaftConfigurationProto c = raft.getConfigurationEntry();
        line.add("peers", peersJson(c.getPeersList()));
        line.add("oldPeers", peersJson(c.getOldPeersList()));
      }
      case METADATA -> line.addProperty("commitIndex", raft.getMetadataEntry().getCommitIndex());
      case OTHER -> line.addProperty("body", raft.getLogEntryBodyCase().name());
    }
    return line.toString();
  }

  /** One JSON line for a snapshot or backup header. */
  static String json(StateFolder state, JournalHeader header) {
    JsonObject line = new JsonObject();
    line.addProperty("type", state.kind());
    line.addProperty("dir", state.dir().toString());
    line.add("header", json(header));
    return line.toString();
  }

  /** A message in protobuf's JSON mapping, as a JSON object to put in a line. */
  private static JsonObject json(com.google.protobuf.MessageOrBuilder message) {
    try {
      return com.google.gson.JsonParser.parseString(
              com.google.protobuf.util.JsonFormat.printer()
                  .omittingInsignificantWhitespace()
                  .print(message))
          .getAsJsonObject();
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      // Only messages with Any fields of unknown types fail; the journal has none.
      throw new IllegalStateException(
          "Cannot print " + message.getClass().getSimpleName() + " as JSON: " + e.getMessage(), e);
    }
  }

  /** A header as text: its fields, one line. */
  static String text(StateFolder state, JournalHeader h) {
    return state.name()
        + ": format "
        + h.getFormatVersion()
        + ", release "
        + h.getRelease()
        + ", raft index "
        + h.getRaftIndex()
        + " term "
        + h.getRaftTerm()
        + ", last applied sequence "
        + h.getFirstSequence()
        + ", "
        + h.getInodeCount()
        + " inodes, created "
        + Instant.ofEpochMilli(h.getCreatedMs());
  }

  private static String peers(List<RaftPeerProto> peers) {
    StringBuilder sb = new StringBuilder("[");
    for (RaftPeerProto p : peers) {
      if (sb.length() > 1) {
        sb.append(", ");
      }
      sb.append(p.getId().toStringUtf8()).append('@').append(p.getAddress());
    }
    return sb.append(']').toString();
  }

  private static JsonArray peersJson(List<RaftPeerProto> peers) {
    JsonArray array = new JsonArray();
    for (RaftPeerProto p : peers) {
      JsonObject o = new JsonObject();
      o.addProperty("id", p.getId().toStringUtf8());
      o.addProperty("address", p.getAddress());
      array.add(o);
    }
    return array;
  }
}
