package io.strata.journal;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.Version;
import io.strata.master.journal.HeaderFile;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.JournalHeader;
import io.strata.proto.journal.RenameEntry;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.MetadataProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.server.raftlog.segmented.SegmentedRaftLogOutputStream;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Builds a journal folder in the layout a master writes, with Ratis's own segment writer ({@link
 * SegmentedRaftLogOutputStream}) and the master's metastore for snapshots, so the tools can be
 * tested on exact files, damaged on purpose, without a running master.
 */
final class JournalFixture {
  static final String GROUP = "02511d47-d67c-49a3-9011-abb3109a44c1";

  final Path dir;
  final Path current;

  /** Batches written, by Raft index. */
  final Map<Long, JournalBatch> batches = new TreeMap<>();

  private long nextInode = 2;

  JournalFixture(Path dir) throws IOException {
    this.dir = dir;
    this.current = dir.resolve("raft").resolve(GROUP).resolve("current");
    Files.createDirectories(current);
  }

  /** A batch creating files {@code names} under the root. */
  JournalBatch creates(String... names) {
    JournalBatch.Builder b = JournalBatch.newBuilder().setClientId("client-1").setCallId(nextInode);
    for (String name : names) {
      b.addEntries(
          JournalEntry.newBuilder()
              .setInode(
                  InodeEntry.newBuilder()
                      .setId(nextInode++)
                      .setParentId(InodeStore.ROOT_ID)
                      .setName(name)
                      .setLength(name.length())
                      .setModificationTimeMs(1_700_000_000_000L)
                      .setMode(0644)
                      .setOwner("alice")
                      .setComplete(true)
                      .putXattrs(
                          "user.tag", com.google.protobuf.ByteString.copyFromUtf8("v-" + name))));
    }
    return b.build();
  }

  static JournalBatch renames(long id, String newName) {
    return JournalBatch.newBuilder()
        .addEntries(
            JournalEntry.newBuilder()
                .setRename(
                    RenameEntry.newBuilder()
                        .setId(id)
                        .setNewParentId(InodeStore.ROOT_ID)
                        .setNewName(newName)
                        .setModificationTimeMs(1_700_000_000_001L)))
        .build();
  }

  static LogEntryProto conf(long term, long index) {
    return LogEntryProto.newBuilder()
        .setTerm(term)
        .setIndex(index)
        .setConfigurationEntry(
            RaftConfigurationProto.newBuilder()
                .addPeers(
                    RaftPeerProto.newBuilder()
                        .setId(ByteString.copyFromUtf8("m1"))
                        .setAddress("127.0.0.1:19202")))
        .build();
  }

  static LogEntryProto metadata(long term, long index, long commit) {
    return LogEntryProto.newBuilder()
        .setTerm(term)
        .setIndex(index)
        .setMetadataEntry(MetadataProto.newBuilder().setCommitIndex(commit))
        .build();
  }

  LogEntryProto batch(long term, long index, JournalBatch batch) {
    batches.put(index, batch);
    return LogEntryProto.newBuilder()
        .setTerm(term)
        .setIndex(index)
        .setStateMachineLogEntry(
            StateMachineLogEntryProto.newBuilder()
                .setLogData(ByteString.copyFrom(batch.toByteArray())))
        .build();
  }

  /** Writes a segment holding {@code entries} (consecutive indexes); closed or open. */
  Path segment(boolean closed, LogEntryProto... entries) throws IOException {
    long first = entries[0].getIndex();
    File open = current.resolve("log_inprogress_" + first).toFile();
    try (SegmentedRaftLogOutputStream out =
        new SegmentedRaftLogOutputStream(
            open, false, 8 << 20, 1 << 20, ByteBuffer.allocateDirect(1 << 16))) {
      for (LogEntryProto e : entries) {
        out.write(e);
      }
      out.flush();
    }
    if (!closed) {
      return open.toPath();
    }
    Path done = current.resolve("log_" + first + "-" + entries[entries.length - 1].getIndex());
    Files.move(open.toPath(), done);
    return done;
  }

  /**
   * Writes {@code raft/<group>/sm/<term>_<index>/}: the metastore after applying the batches
   * written so far up to {@code index}, with sequences from 1, and its header.
   */
  Path snapshot(long term, long index) throws IOException {
    Path snap = snapshots().resolve(term + "_" + index);
    return writeState(snap, "snapshot", term, index);
  }

  /** The group's snapshot folder, where a master keeps them. */
  Path snapshots() {
    return current.resolveSibling("sm");
  }

  /** The snapshot folder of the fixture's group under a journal folder. */
  static Path snapshotsOf(Path journalDir) {
    return journalDir.resolve("raft").resolve(GROUP).resolve("sm");
  }

  /** Writes a backup folder {@code backup-20260101-000000-<index>} under {@code parent}. */
  Path backup(Path parent, long term, long index) throws IOException {
    return writeState(parent.resolve("backup-20260101-000000-" + index), "backup", term, index);
  }

  private Path writeState(Path folder, String kind, long term, long index) throws IOException {
    Files.createDirectories(folder);
    Path work = Files.createTempDirectory(folder.getParent(), "work-");
    long sequence = 0;
    long inodes;
    try (InodeStore store = InodeStore.open(work.resolve("db"), 100, new SimpleMeterRegistry())) {
      for (Map.Entry<Long, JournalBatch> e : batches.entrySet()) {
        if (e.getKey() > index) {
          break;
        }
        for (JournalEntry entry : e.getValue().getEntriesList()) {
          store.apply(entry.toBuilder().setSequence(++sequence).build());
        }
      }
      store.checkpointTo(folder.resolve("db"));
      inodes = store.inodeCount();
    }
    deleteTree(work);
    HeaderFile.write(
        folder.resolve("HEADER"),
        JournalHeader.newBuilder()
            .setKind(kind)
            .setFormatVersion(Version.FIRST_LAYOUT_VERSION)
            .setRelease(Version.RELEASE)
            .setFirstSequence(sequence)
            .setRaftIndex(index)
            .setRaftTerm(term)
            .setInodeCount(inodes)
            .setCreatedMs(System.currentTimeMillis())
            .build());
    return folder;
  }

  /** A journal of two closed segments and an open one, with a snapshot at index 4. */
  static JournalFixture standard(Path dir) throws IOException {
    JournalFixture f = new JournalFixture(dir);
    f.segment(
        true,
        conf(1, 0),
        metadata(1, 1, 0),
        f.batch(1, 2, f.creates("a", "b")),
        f.batch(1, 3, f.creates("c")));
    f.segment(
        true,
        f.batch(1, 4, renames(2, "a2")),
        f.batch(2, 5, f.creates("d", "e", "f")),
        metadata(2, 6, 5));
    f.segment(false, f.batch(2, 7, f.creates("g")), f.batch(2, 8, renames(3, "b2")));
    f.snapshot(1, 4);
    return f;
  }

  /** Every file of a tree, for tests that damage one. */
  static List<Path> files(Path root, String suffix) throws IOException {
    List<Path> files = new ArrayList<>();
    try (var walk = Files.walk(root)) {
      walk.filter(Files::isRegularFile)
          .filter(p -> p.getFileName().toString().endsWith(suffix))
          .forEach(files::add);
    }
    return files;
  }

  /** Flips every bit of the byte at {@code offset}. */
  static void flipByte(Path file, long offset) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    bytes[Math.toIntExact(offset)] ^= (byte) 0xFF;
    Files.write(file, bytes);
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (var walk = Files.walk(root)) {
      for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
