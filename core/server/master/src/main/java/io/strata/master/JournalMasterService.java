package io.strata.master;

import io.grpc.stub.StreamObserver;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.master.journal.JournalBackups;
import io.strata.master.journal.JournalSystem;
import io.strata.master.journal.QuorumMembership;
import io.strata.proto.AddPeerRequest;
import io.strata.proto.AddPeerResponse;
import io.strata.proto.BackupRequest;
import io.strata.proto.BackupResponse;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.JournalMasterGrpc;
import io.strata.proto.RemovePeerRequest;
import io.strata.proto.RemovePeerResponse;
import io.strata.proto.TransferLeadershipRequest;
import io.strata.proto.TransferLeadershipResponse;
import io.strata.server.common.RpcCalls;
import java.nio.file.Path;

/** The gRPC face of the journal's quorum and backups ({@code strata fsadmin journal ...}). */
final class JournalMasterService extends JournalMasterGrpc.JournalMasterImplBase {
  private final JournalSystem journal;
  private final RpcCalls calls;
  private final Path defaultBackupDir;

  JournalMasterService(JournalSystem journal, RpcCalls calls, StrataConfig conf) {
    this.journal = journal;
    this.calls = calls;
    this.defaultBackupDir = Path.of(conf.getString(MasterKeys.BACKUP_DIR));
  }

  @Override
  public void getQuorumInfo(
      GetQuorumInfoRequest request, StreamObserver<GetQuorumInfoResponse> observer) {
    calls.unary(
        "GetQuorumInfo",
        observer,
        () -> {
          QuorumMembership.View view = journal.membership().view();
          return GetQuorumInfoResponse.newBuilder()
              .setGroupId(view.groupId())
              .setTerm(view.term())
              .setLeaderAddress(view.leaderAddress())
              .setCommitIndex(view.commitIndex())
              .addAllPeers(view.peers())
              .setAnsweredBy(journal.selfAddress())
              .build();
        });
  }

  @Override
  public void transferLeadership(
      TransferLeadershipRequest request, StreamObserver<TransferLeadershipResponse> observer) {
    calls.unary(
        "TransferLeadership",
        observer,
        () -> {
          journal.membership().transferLeadership(required(request.getAddress(), "address"));
          String leader = journal.leaderAddress();
          return TransferLeadershipResponse.newBuilder()
              .setLeaderAddress(leader == null ? "" : leader)
              .build();
        });
  }

  @Override
  public void addPeer(AddPeerRequest request, StreamObserver<AddPeerResponse> observer) {
    calls.unary(
        "AddPeer",
        observer,
        () ->
            AddPeerResponse.newBuilder()
                .addAllPeers(
                    journal
                        .membership()
                        .addPeer(
                            required(request.getAddress(), "address"),
                            required(request.getJournalAddress(), "journal_address")))
                .build());
  }

  @Override
  public void removePeer(RemovePeerRequest request, StreamObserver<RemovePeerResponse> observer) {
    calls.unary(
        "RemovePeer",
        observer,
        () ->
            RemovePeerResponse.newBuilder()
                .addAllPeers(
                    journal.membership().removePeer(required(request.getAddress(), "address")))
                .build());
  }

  @Override
  public void backup(BackupRequest request, StreamObserver<BackupResponse> observer) {
    calls.unary(
        "Backup",
        observer,
        () -> {
          Path dir = request.getDir().isEmpty() ? defaultBackupDir : Path.of(request.getDir());
          JournalBackups.Backup b = journal.backups().backup(dir);
          return BackupResponse.newBuilder()
              .setPath(b.dir().toString())
              .setIndex(b.index())
              .setSequence(b.sequence())
              .setInodeCount(b.inodeCount())
              .setWrittenBy(journal.selfAddress())
              .build();
        });
  }

  private static String required(String value, String field) throws StrataException {
    if (value.isBlank()) {
      throw StrataException.invalidArgument(
          "The request names no " + field + " (host:port of a master)");
    }
    return value.trim();
  }
}
