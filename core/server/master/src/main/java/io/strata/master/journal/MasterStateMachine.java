package io.strata.master.journal;

import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Raft state machine of the master: applies each committed {@link JournalBatch} to the {@link
 * InodeStore} exactly as a restart replays it, takes snapshots (RocksDB checkpoints, see {@link
 * Snapshots}) and loads them, and tells the master when it gains or loses the lead.
 *
 * <p>Sequences: each applied entry gets the previous applied entry's sequence + 1, so every master
 * assigns the same sequences to the same entries without them being in the log.
 *
 * <p>Locking: every batch applies under {@link #readersLock} (the write side of the lock that
 * readers of the namespace take for a walk), so that a reader sees each batch whole or not at all;
 * the lock is held only while the batch is written to the metastore.
 *
 * <p>A batch that cannot be applied (a metastore error, or an entry of a newer layout) stops this
 * master: nothing after it is applied, the last applied index stays before it, no snapshot is taken
 * from then on, and the exception ends Ratis's apply loop, which closes this master's member of the
 * group. The master leaves the group rather than serve or snapshot a state that is missing a
 * committed entry; started again, it loads its last good snapshot and replays the log from there.
 */
final class MasterStateMachine extends BaseStateMachine {
  private static final Logger LOG = LoggerFactory.getLogger(MasterStateMachine.class);

  /** What the master learns from the state machine. */
  interface Listener {
    /**
     * Entries applied, with their sequences; called in apply order, before the callbacks of the
     * batch's own changes run.
     */
    void applied(List<JournalEntry> entries);

    /** A batch and its changes' callbacks are done; the applied sequence is final for it. */
    void advanced(long sequence);

    /** A committed batch could not be applied: this master stops taking part in the group. */
    void applyFailed(long index, Exception cause);

    /** This master leads and has applied everything before its term. */
    void leaderReady();

    /** Leadership moved (to {@code leader}, null when unknown). */
    void leaderChanged(RaftPeerId leader);

    /** The store was replaced by a snapshot sent by the leader. */
    void reloaded();
  }

  /** Applies one journal entry to the metastore: {@link InodeStore#apply} but in tests. */
  @FunctionalInterface
  interface Applier {
    void apply(JournalEntry entry) throws IOException;
  }

  private final InodeStore store;
  private final Applier applier;
  private final ClientId localClient;
  private final Listener listener;

  /** A batch this master submitted, kept so that its apply need not parse it back. */
  private record Expected(JournalBatch batch, Consumer<List<JournalEntry>> applied) {}

  private final Map<Long, Expected> pending = new ConcurrentHashMap<>();
  private final CallHistory calls;

  /** Held by applies and by snapshots and backups, so a copy is of one applied index. */
  private final ReentrantLock applyLock = new ReentrantLock();

  private final Storage storage = new Storage();

  /** A backup to start a fresh group from, or null. */
  private final Path restoreFrom;

  private volatile Lock readersLock = new ReentrantLock();
  private volatile Snapshots snapshots;
  private volatile Snapshots.Found latest;
  private volatile IOException failure;

  MasterStateMachine(
      InodeStore store,
      ClientId localClient,
      CallHistory calls,
      Path restoreFrom,
      Listener listener) {
    this(store, store::apply, localClient, calls, restoreFrom, listener);
  }

  MasterStateMachine(
      InodeStore store,
      Applier applier,
      ClientId localClient,
      CallHistory calls,
      Path restoreFrom,
      Listener listener) {
    this.store = store;
    this.applier = applier;
    this.restoreFrom = restoreFrom;
    this.localClient = localClient;
    this.calls = calls;
    this.listener = listener;
  }

  /** Sets the lock readers of the namespace take; every batch applies under it. */
  void setReadersLock(Lock lock) {
    this.readersLock = lock;
  }

  /**
   * Registers what to run with the applied entries of this master's own call {@code callId}, which
   * sends {@code batch}.
   */
  void expect(long callId, JournalBatch batch, Consumer<List<JournalEntry>> applied) {
    pending.put(callId, new Expected(batch, applied));
  }

  void forget(long callId) {
    pending.remove(callId);
  }

  Snapshots snapshots() {
    return snapshots;
  }

  Snapshots.Found latest() {
    return latest;
  }

  IOException failure() {
    return failure;
  }

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage)
      throws IOException {
    super.initialize(server, groupId, raftStorage);
    // Ratis pauses a running state machine before it installs a snapshot the leader sent and
    // expects it running again after reinitialize: the life cycle is kept for it.
    getLifeCycle()
        .startAndTransition(
            () -> {
              snapshots = new Snapshots(raftStorage.getStorageDir().getStateMachineDir().toPath());
              if (restoreFrom != null) {
                restore(raftStorage);
              }
              loadNewestSnapshot();
            },
            IOException.class);
  }

  /** Ratis pauses applies before it installs a snapshot the leader sent (see reinitialize). */
  @Override
  public void pause() {
    org.apache.ratis.util.LifeCycle life = getLifeCycle();
    if (life.getCurrentState() == org.apache.ratis.util.LifeCycle.State.RUNNING) {
      life.transition(org.apache.ratis.util.LifeCycle.State.PAUSING);
      life.transition(org.apache.ratis.util.LifeCycle.State.PAUSED);
    }
  }

  /** Called after the leader installed a snapshot in this follower's folder (paused). */
  @Override
  public void reinitialize() throws IOException {
    loadNewestSnapshot();
    listener.reloaded();
    if (getLifeCycle().getCurrentState() == org.apache.ratis.util.LifeCycle.State.PAUSED) {
      getLifeCycle().transition(org.apache.ratis.util.LifeCycle.State.STARTING);
      getLifeCycle().transition(org.apache.ratis.util.LifeCycle.State.RUNNING);
    }
  }

  /**
   * Makes a backup the snapshot a fresh group starts from. A master whose journal already holds
   * state ignores the backup (and says so): restoring over a live group would fork it.
   */
  private void restore(RaftStorage raftStorage) throws IOException {
    Snapshots.Found backup = Snapshots.read(restoreFrom);
    boolean hasLog;
    try (java.util.stream.Stream<Path> files =
        java.nio.file.Files.list(raftStorage.getStorageDir().getCurrentDir().toPath())) {
      hasLog = files.anyMatch(f -> f.getFileName().toString().startsWith("log_"));
    }
    if (hasLog || !snapshots.complete().isEmpty()) {
      LOG.warn("Not restoring {}: this master's journal already holds state", restoreFrom);
      return;
    }
    // Term 1: the new group's terms start afresh (Ratis takes a last entry of term 0 for an
    // empty log and would refuse every vote); the index is kept so that the backup's index and
    // the restored group's first snapshot name the same state.
    Path dir = snapshots.root().resolve("1_" + backup.index());
    java.nio.file.Files.createDirectories(dir.resolve(Snapshots.DB));
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(backup.db())) {
      for (Path f : (Iterable<Path>) files::iterator) {
        java.nio.file.Files.copy(f, dir.resolve(Snapshots.DB).resolve(f.getFileName()));
      }
    }
    HeaderFile.write(
        dir.resolve(HeaderFile.NAME),
        backup.header().toBuilder().setKind(HeaderFile.SNAPSHOT_KIND).setRaftTerm(1).build());
    LOG.info(
        "Starting a fresh group from backup {} (index {}, sequence {}, {} inodes)",
        restoreFrom,
        backup.index(),
        backup.sequence(),
        backup.header().getInodeCount());
  }

  private void loadNewestSnapshot() throws IOException {
    applyLock.lock();
    try {
      Optional<Snapshots.Found> newest = snapshots.newest();
      if (newest.isPresent()) {
        Snapshots.Found s = newest.get();
        if (latest == null
            || s.index() != latest.index()
            || store.appliedSequence() != s.sequence()) {
          LOG.info(
              "Loading the metastore from snapshot {} (index {}, sequence {})",
              s.dir(),
              s.index(),
              s.sequence());
          store.replaceWith(s.db());
        }
        try {
          calls.readFrom(s.dir().resolve(CallHistory.FILE));
        } catch (IOException e) {
          LOG.warn(
              "Cannot read the call history of snapshot {} ({}): a client's retry of a call made"
                  + " before it may fail as a new call would",
              s.dir(),
              e.getMessage());
        }
        if (store.appliedSequence() != s.sequence()) {
          throw new IOException(
              "Snapshot "
                  + s.dir()
                  + " claims sequence "
                  + s.sequence()
                  + " but its database has applied "
                  + store.appliedSequence()
                  + "; remove that folder to fall back to an older snapshot or the log");
        }
        latest = s;
        setLastAppliedTermIndex(TermIndex.valueOf(s.term(), s.index()));
      }
    } finally {
      applyLock.unlock();
    }
  }

  @Override
  public StateMachineStorage getStateMachineStorage() {
    return storage;
  }

  @Override
  public SnapshotInfo getLatestSnapshot() {
    Snapshots.Found s = latest;
    if (s == null) {
      return null;
    }
    try {
      List<FileInfo> files = new ArrayList<>();
      for (Path p : Snapshots.files(s)) {
        files.add(new FileInfo(p, null));
      }
      return new FileListSnapshotInfo(files, TermIndex.valueOf(s.term(), s.index()));
    } catch (IOException e) {
      LOG.warn("Cannot list snapshot {}: {}", s.dir(), e.toString());
      return null;
    }
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    if (failure != null) {
      // Not reached in practice: the first failure ends Ratis's apply loop.
      throw new IllegalStateException(
          "This master stopped applying the journal (" + failure.getMessage() + ")");
    }
    boolean local =
        localClient.toByteString().equals(entry.getStateMachineLogEntry().getClientId());
    Expected expected = local ? pending.remove(entry.getStateMachineLogEntry().getCallId()) : null;
    Consumer<List<JournalEntry>> callback = expected == null ? null : expected.applied();
    long first = store.appliedSequence() + 1;
    JournalBatch batch;
    List<JournalEntry> applied;
    readersLock.lock();
    applyLock.lock();
    try {
      batch =
          expected != null
              ? expected.batch()
              : JournalBatch.parseFrom(
                  entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer());
      applied = new ArrayList<>(batch.getEntriesCount());
      long sequence = store.appliedSequence();
      for (JournalEntry e : batch.getEntriesList()) {
        JournalEntry numbered = e.toBuilder().setSequence(++sequence).build();
        applier.apply(numbered);
        applied.add(numbered);
      }
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
      // Recorded before readers see the change: a retry of the call that finds its effect
      // also finds the call applied (RetriedCallReplay).
      recordCalls(batch);
    } catch (IOException | RuntimeException e) {
      // The entry is committed: every master must apply it. This one cannot, so it must not
      // count it as applied, snapshot past it or serve: it leaves the group (Ratis closes
      // this member when the apply throws) and recovers from its last good snapshot when
      // started again.
      failure = e instanceof IOException io ? io : new IOException(e.toString(), e);
      LOG.error(
          "Cannot apply journal entry {} (sequence {} on): this master stops and leaves"
              + " the group; restart it to recover from its last snapshot",
          entry.getIndex(),
          first,
          e);
      listener.applyFailed(entry.getIndex(), failure);
      throw new IllegalStateException(
          "Cannot apply journal entry " + entry.getIndex() + ": " + e.getMessage(), e);
    } finally {
      applyLock.unlock();
      readersLock.unlock();
    }
    listener.applied(applied);
    if (callback != null) {
      callback.accept(applied);
    }
    listener.advanced(store.appliedSequence());
    return CompletableFuture.completedFuture(
        Message.valueOf(ByteString.copyFrom(ByteBuffer.allocate(8).putLong(0, first))));
  }

  private void recordCalls(JournalBatch batch) {
    if (batch.getCallsCount() > 0) {
      for (io.strata.proto.journal.BatchedCall c : batch.getCallsList()) {
        if (!c.getClientId().isEmpty()) {
          calls.record(c.getClientId(), c.getCallId());
        }
      }
    } else if (!batch.getClientId().isEmpty()) {
      calls.record(batch.getClientId(), batch.getCallId());
    }
  }

  /** Runs {@code body} between two applies, so it sees the state of one applied index. */
  <T> T atAppliedIndex(ApplyBarrier<T> body) throws IOException {
    applyLock.lock();
    try {
      if (failure != null) {
        throw new IOException(
            "This master could not apply a committed journal entry ("
                + failure.getMessage()
                + "); its state is not a state of the journal: restart it",
            failure);
      }
      TermIndex at = getLastAppliedTermIndex();
      return body.run(at == null ? TermIndex.valueOf(0, 0) : at);
    } finally {
      applyLock.unlock();
    }
  }

  /** Work done with applies held off. */
  interface ApplyBarrier<T> {
    T run(TermIndex applied) throws IOException;
  }

  @Override
  public long takeSnapshot() throws IOException {
    if (failure != null) {
      throw new IOException(
          "No snapshot: this master could not apply a committed journal entry"
              + " ("
              + failure.getMessage()
              + "), so its state lacks it; restart it",
          failure);
    }
    return atAppliedIndex(
        at -> {
          if (at.getIndex() <= 0 || (latest != null && latest.index() == at.getIndex())) {
            return latest == null ? RaftLog.INVALID_LOG_INDEX : latest.index();
          }
          long start = System.nanoTime();
          Snapshots.Found s = snapshots.take(store, at.getTerm(), at.getIndex());
          // Before the snapshot is offered to followers, which get every file in its folder.
          calls.writeTo(s.dir().resolve(CallHistory.FILE));
          latest = s;
          snapshots.prune(2);
          LOG.info(
              "Snapshot at index {} (sequence {}) taken in {} ms",
              at.getIndex(),
              s.sequence(),
              (System.nanoTime() - start) / 1_000_000);
          return at.getIndex();
        });
  }

  @Override
  public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeaderId) {
    listener.leaderChanged(newLeaderId);
  }

  @Override
  public void notifyLeaderReady() {
    listener.leaderReady();
  }

  @Override
  public void notifyNotLeader(java.util.Collection<TransactionContext> pendingEntries) {
    // Entries this master submitted but will not see committed under its lead: their callers
    // get NotLeaderException from Ratis; their callbacks must not linger.
    for (TransactionContext t : pendingEntries) {
      if (t.getClientRequest() != null) {
        pending.remove(t.getClientRequest().getCallId());
      }
    }
    // Called as the leader steps down, also when no other leader is known yet (it lost its
    // majority): leadership changed to nobody.
    listener.leaderChanged(null);
  }

  @Override
  public void notifyFollowerSlowness(
      RoleInfoProto roleInfo, org.apache.ratis.protocol.RaftPeer follower) {
    LOG.warn("Follower {} is slow to answer the leader", follower.getId());
  }

  /** Where Ratis keeps this state machine's snapshots: the group's sm folder (the default). */
  private final class Storage implements StateMachineStorage {
    @Override
    public void init(RaftStorage raftStorage) {}

    @Override
    public SnapshotInfo getLatestSnapshot() {
      return MasterStateMachine.this.getLatestSnapshot();
    }

    @Override
    public void format() {}

    @Override
    public void cleanupOldSnapshots(org.apache.ratis.statemachine.SnapshotRetentionPolicy policy)
        throws IOException {
      Snapshots s = snapshots;
      if (s != null) {
        s.prune(Math.max(1, policy.getNumSnapshotsRetained()));
      }
    }
  }
}
