package io.strata.master.journal;

import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * How a master's Raft server is configured from Strata's keys, and where the group's files live.
 * Every Strata master group has the same id: a cluster is one group.
 */
final class RaftSettings {
  static final RaftGroupId GROUP_ID =
      RaftGroupId.valueOf(
          UUID.nameUUIDFromBytes("strata-masters".getBytes(StandardCharsets.UTF_8)));

  private RaftSettings() {}

  /** The folder of the group's Raft log and snapshots under a journal folder. */
  static Path groupDir(Path journalDir) {
    return journalDir.resolve("raft").resolve(GROUP_ID.getUuid().toString());
  }

  static RaftProperties properties(StrataConfig conf, QuorumAddresses quorum, Path journalDir)
      throws IOException {
    RaftProperties p = new RaftProperties();
    Path raftDir = journalDir.resolve("raft");
    Files.createDirectories(raftDir);
    RaftServerConfigKeys.setStorageDir(p, List.of(raftDir.toFile()));
    GrpcConfigKeys.Server.setHost(p, quorum.self().journalHost());
    GrpcConfigKeys.Server.setPort(p, quorum.self().journalPort());
    long electionMs =
        Math.max(100, conf.getDuration(MasterKeys.JOURNAL_ELECTION_TIMEOUT).toMillis());
    RaftServerConfigKeys.Rpc.setTimeoutMin(
        p, TimeDuration.valueOf(electionMs, TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(
        p, TimeDuration.valueOf(2 * electionMs, TimeUnit.MILLISECONDS));
    // A one-peer group elects itself at once instead of waiting out a first timeout.
    if (quorum.members().size() == 1) {
      RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(
          p, TimeDuration.valueOf(10, TimeUnit.MILLISECONDS));
      RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(
          p, TimeDuration.valueOf(20, TimeUnit.MILLISECONDS));
    }
    RaftServerConfigKeys.Log.setSegmentSizeMax(
        p, SizeInBytes.valueOf(conf.getBytes(MasterKeys.JOURNAL_SEGMENT_SIZE)));
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    // Snapshots are rare (every strata.master.journal.checkpoint.entries): purge at each.
    RaftServerConfigKeys.Log.setPurgeGap(p, 1);
    // fsync off (the default) still writes every entry before it is acknowledged; it does not
    // wait for the device. With several masters a majority holds each entry anyway.
    RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, !conf.getBoolean(MasterKeys.JOURNAL_FSYNC));
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(
        p, Math.max(1, conf.getLong(MasterKeys.CHECKPOINT_ENTRIES)));
    RaftServerConfigKeys.Snapshot.setCreationGap(p, 1);
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
    return p;
  }
}
