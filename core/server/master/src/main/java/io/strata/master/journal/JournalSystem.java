package io.strata.master.journal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.DaemonThreads;
import io.strata.common.LayoutFeature;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's replicated journal: every namespace change is part of a {@link JournalBatch} in an
 * Apache Ratis log, committed by a majority of the masters and applied by each to its own {@link
 * InodeStore} through {@link MasterStateMachine}. One master is a one-peer group on the same path.
 *
 * <p>Only the leader writes ({@link #submit} fails with UNAVAILABLE, naming the leader, on any
 * other master). A change's future completes once its entries are committed and applied here, so
 * the change is durable on a majority and visible to the caller's next read. Changes handed over at
 * the same time share log entries ({@link GroupCommit}); nobody waits for the commit while holding
 * anything another change needs.
 *
 * <p>Files, under {@code strata.master.journal.dir}: {@code raft/<group>/current/} holds the Ratis
 * log segments, {@code raft/<group>/sm/<term>_<index>/} the snapshots ({@link Snapshots}). Start-up
 * loads the newest snapshot into the metastore folder and Ratis replays the log after it; a
 * follower that fell behind the leader's log is sent its snapshot.
 */
public final class JournalSystem implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(JournalSystem.class);
  private static final Duration WRITE_TIMEOUT = RaftReplies.TIMEOUT;

  static {
    // Ratis ends the JVM on some start-up failures (a journal port in use); a master reports
    // them as errors of its start instead, and tests run several masters in one JVM.
    org.apache.ratis.util.ExitUtils.disableSystemExit();
  }

  /** What the master does when this master's role changes. */
  public interface RoleListener {
    /**
     * This master leads and has applied every earlier entry: start leader-only work. A failure is
     * retried, and then the lead is handed to another master ({@link LeaderRole}).
     */
    void gainedLead();

    /** This master no longer leads (or its start failed): stop leader-only work. */
    void lostLead();
  }

  private final QuorumAddresses quorum;
  private final InodeStore store;
  private final MasterStateMachine stateMachine;
  private final RaftServer server;
  private final ClientId localClient = ClientId.randomId();
  private final AtomicLong callIds = new AtomicLong();
  private final CallHistory calls = new CallHistory();
  private final Path journalDir;
  private final LeaderRole role;
  private final JournalWrites writes;
  private final QuorumMembership membership;
  private final JournalBackups backups;
  private final Counter checkpointCounter;
  private final Counter leaderChanges;
  private final Counter leadsGained;
  private volatile String boundRpcAddress;
  private volatile LongConsumer appliedListener;
  private volatile Consumer<List<JournalEntry>> entriesListener;
  private volatile Runnable failureListener;
  private volatile boolean closed;

  /** Follower checks: its role, and whether it stalled behind the leader. */
  private final JournalSpace space;

  private final ScheduledExecutorService catchUpCheck =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("master-catch-up-check"));

  private JournalSystem(
      StrataConfig conf, MeterRegistry registry, MasterStateMachine.Applier applier)
      throws IOException {
    this.quorum = QuorumAddresses.from(conf);
    this.journalDir = Path.of(conf.getString(MasterKeys.JOURNAL_DIR));
    Path metastoreDir = Path.of(conf.getString(MasterKeys.METASTORE_DIR));
    // The metastore is rebuilt from the newest snapshot and the log on every start.
    Snapshots.deleteTree(metastoreDir);
    this.store = InodeStore.open(metastoreDir, conf.getInt(MasterKeys.INODE_CACHE_SIZE), registry);
    String restore = conf.getString(MasterKeys.RESTORE_BACKUP);
    this.role = new LeaderRole(quorum.self().rpcAddress());
    this.space =
        new JournalSpace(
            List.of(journalDir, metastoreDir),
            conf.getBytes(MasterKeys.JOURNAL_RESERVED_SPACE),
            registry);
    this.stateMachine =
        new MasterStateMachine(
            store,
            applier == null ? store::apply : applier,
            localClient,
            calls,
            restore.isEmpty() ? null : Path.of(restore),
            new Events());
    this.checkpointCounter =
        Counter.builder(MetricNames.MASTER_JOURNAL_CHECKPOINTS)
            .description("Snapshots requested of the journal")
            .register(registry);
    this.leaderChanges =
        Counter.builder(MetricNames.MASTER_JOURNAL_LEADER_CHANGES)
            .description("Leader changes this master saw (elections and transfers)")
            .register(registry);
    this.leadsGained =
        Counter.builder(MetricNames.MASTER_JOURNAL_FAILOVERS)
            .description("Times this master took over as leader")
            .register(registry);
    try {
      this.server =
          RaftServer.newBuilder()
              .setServerId(RaftPeerId.valueOf(quorum.self().peerId()))
              .setGroup(RaftGroup.valueOf(RaftSettings.GROUP_ID, peers(quorum.members())))
              .setStateMachine(stateMachine)
              // Recover the group's folder when it exists, format it when it does not.
              .setOption(org.apache.ratis.server.storage.RaftStorage.StartupOption.RECOVER)
              .setProperties(RaftSettings.properties(conf, quorum, journalDir))
              .setParameters(new Parameters())
              .build();
    } catch (IOException | RuntimeException e) {
      store.close();
      throw e;
    }
    this.writes =
        new JournalWrites(
            server,
            this::division,
            stateMachine,
            localClient,
            callIds,
            this::notLeader,
            log ->
                new GroupCommit(
                    log,
                    () -> store.layoutVersion() >= LayoutFeature.GROUP_COMMIT.version(),
                    conf.getInt(MasterKeys.JOURNAL_BATCH_IN_FLIGHT),
                    conf.getBytes(MasterKeys.JOURNAL_BATCH_BYTES),
                    conf.getDuration(MasterKeys.JOURNAL_BATCH_WAIT).toNanos()),
            registry);
    this.membership =
        new QuorumMembership(
            new QuorumMembership.Self() {
              @Override
              public RaftServer server() {
                return server;
              }

              @Override
              public RaftServer.Division division() throws IOException {
                return JournalSystem.this.division();
              }

              @Override
              public String address() {
                return selfAddress();
              }

              @Override
              public String leaderAddress() {
                return JournalSystem.this.leaderAddress();
              }

              @Override
              public StrataException notLeader() {
                return JournalSystem.this.notLeader();
              }
            },
            localClient,
            callIds,
            role::leading);
    this.backups = new JournalBackups(store, stateMachine);
    JournalGauges.register(
        registry, this::division, role::leading, stateMachine::latest, journalDir, writes.commit());
  }

  /**
   * Opens the metastore (empty until {@link #start}) and builds this master's Raft server without
   * starting it, so that the master can set its listeners first.
   */
  public static JournalSystem open(StrataConfig conf, MeterRegistry registry) throws IOException {
    return new JournalSystem(conf, registry, null);
  }

  /** {@link #open}, with entries applied to the metastore by {@code applier} (tests). */
  static JournalSystem open(
      StrataConfig conf, MeterRegistry registry, MasterStateMachine.Applier applier)
      throws IOException {
    return new JournalSystem(conf, registry, applier);
  }

  /**
   * Starts the Raft server: the newest snapshot loads and the log after it replays. With one master
   * it returns once that master leads and serves; with several, once the server runs (the group
   * elects a leader when a majority is up).
   */
  public void start() throws IOException {
    try {
      server.start();
    } catch (IOException | RuntimeException e) {
      throw new IOException(
          "Cannot start the journal in " + journalDir + ": " + RaftReplies.rootMessage(e), e);
    }
    if (quorum.members().size() == 1) {
      awaitLead(Duration.ofSeconds(60));
    } else {
      StalledFollowerCheck stalled =
          new StalledFollowerCheck(quorum, this::division, this::leaderAddress);
      // Both checks log their own failures and run until the journal closes.
      var unusedStalledCheck =
          catchUpCheck.scheduleWithFixedDelay(stalled::check, 1, 1, TimeUnit.SECONDS);
      // Ratis reports a leader that steps down for want of a majority by no event of its own
      // on every path: the role is also checked.
      var unusedRoleCheck =
          catchUpCheck.scheduleWithFixedDelay(this::checkRole, 200, 200, TimeUnit.MILLISECONDS);
    }
  }

  private void checkRole() {
    try {
      if (role.leading() && !division().getInfo().isLeader()) {
        lostLead(division().getInfo().getLeaderId());
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("Role check failed: {}", e.toString());
    }
  }

  private static List<RaftPeer> peers(List<QuorumAddresses.Member> members) {
    List<RaftPeer> peers = new ArrayList<>();
    for (QuorumAddresses.Member m : members) {
      peers.add(peer(m));
    }
    return peers;
  }

  static RaftPeer peer(QuorumAddresses.Member m) {
    return RaftPeer.newBuilder()
        .setId(m.peerId())
        .setAddress(m.journalAddress())
        .setClientAddress(m.rpcAddress())
        .build();
  }

  /** The folder of the group's Raft log and snapshots under a journal folder. */
  public static Path groupDir(Path journalDir) {
    return RaftSettings.groupDir(journalDir);
  }

  /** Waits until this master leads and is ready to serve. */
  public void awaitLead(Duration timeout) throws IOException {
    try {
      role.awaitServing(timeout);
    } catch (TimeoutException e) {
      IOException failed = stateMachine.failure();
      throw new IOException(
          "This master did not become the leader of its journal within "
              + timeout.toSeconds()
              + " s; "
              + (failed != null
                  ? "it could not apply a journal entry: " + failed.getMessage()
                  : "see its log for Raft election messages"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while waiting to lead", e);
    }
  }

  public InodeStore store() {
    return store;
  }

  public CallHistory calls() {
    return calls;
  }

  /** The configured masters and which one this is. */
  public QuorumAddresses quorum() {
    return quorum;
  }

  /**
   * True while this master leads, has applied everything before its term and started its
   * leader-only work: it serves every call.
   */
  public boolean isLeader() {
    return role.serving() && stateMachine.failure() == null;
  }

  /** The leader's gRPC address, or null while none is known. */
  public String leaderAddress() {
    try {
      RaftServer.Division d = division();
      RaftPeerId leader = d.getInfo().getLeaderId();
      if (leader == null) {
        return null;
      }
      if (leader.equals(server.getId())) {
        return stateMachine.failure() == null ? selfAddress() : null;
      }
      RaftPeer peer = d.getRaftConf().getPeer(leader);
      return peer == null ? null : peer.getClientAddress();
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Sets this master's gRPC address as it is bound: a lone master configured with port 0 (an
   * ephemeral port) learns its real port only once serving.
   */
  public void setBoundRpcAddress(String address) {
    this.boundRpcAddress = address;
  }

  /** This master's gRPC address. */
  public String selfAddress() {
    String bound = boundRpcAddress;
    return bound != null ? bound : quorum.self().rpcAddress();
  }

  private RaftServer.Division division() throws IOException {
    return server.getDivision(RaftSettings.GROUP_ID);
  }

  /** The error of a call that only the leader may serve. */
  public StrataException notLeader() {
    IOException failed = stateMachine.failure();
    if (failed != null) {
      return StrataException.unavailable(
          "This master ("
              + selfAddress()
              + ") stopped: it"
              + " could not apply a committed journal entry ("
              + failed.getMessage()
              + ") and left"
              + " the group; restart it to recover from its last snapshot",
          null);
    }
    String leader = leaderAddress();
    return StrataException.unavailable(
        "This master ("
            + selfAddress()
            + ") is not the leader; "
            + (leader == null
                ? "an election is in progress, retry shortly"
                : "the leader is " + leader),
        null);
  }

  /**
   * Sets the lock readers of the namespace take for a walk: every batch applies under its write
   * side, so a reader sees a batch whole or not at all.
   */
  public void setReadersLock(Lock lock) {
    stateMachine.setReadersLock(lock);
  }

  public void onRoleChange(RoleListener listener) {
    role.setWork(
        new LeaderRole.Work() {
          @Override
          public void start() {
            listener.gainedLead();
          }

          @Override
          public void stop() {
            listener.lostLead();
          }

          @Override
          public boolean handOver() {
            return handOverLead();
          }
        });
  }

  /**
   * Tells {@code listener} the last applied sequence after every applied batch, in order, and after
   * what the batch's own callbacks published.
   */
  public void onApplied(LongConsumer listener) {
    this.appliedListener = listener;
  }

  /**
   * Tells {@code listener} every applied batch's entries, on every master, before the callbacks of
   * the batch's own changes run.
   */
  public void onEntriesApplied(Consumer<List<JournalEntry>> listener) {
    this.entriesListener = listener;
  }

  /** Runs {@code listener} once, when this master stops because it could not apply an entry. */
  public void onApplyFailure(Runnable listener) {
    this.failureListener = listener;
  }

  /**
   * Hands a change to the journal: {@code entries} in order (their sequences are set when they
   * apply), made by {@code caller} (null: by the master itself). {@code applied} runs with the
   * entries as applied, on the apply thread, before any later change applies and before the future
   * completes. Fails at once with UNAVAILABLE on a master that does not lead; the future fails with
   * UNAVAILABLE when the change is not applied within 30 s or the lead is lost before it is.
   */
  public CompletableFuture<List<JournalEntry>> submit(
      List<JournalEntry> entries, CallIdentity caller, Consumer<List<JournalEntry>> applied)
      throws StrataException {
    checkWritable();
    return writes.submit(entries, caller, applied);
  }

  /** Fails with UNAVAILABLE unless this master may write now. */
  public void checkWritable() throws StrataException {
    if (closed) {
      throw StrataException.unavailable("The master is shutting down; retry on its restart", null);
    }
    if (!role.leading() || stateMachine.failure() != null) {
      throw notLeader();
    }
    space.check();
  }

  public List<JournalEntry> write(List<JournalEntry.Builder> entries) throws StrataException {
    return write(entries, null);
  }

  /**
   * {@link #submit}, waiting for the apply: the entries are committed and applied when this
   * returns, and {@code applied} ran with them before any later batch applied.
   */
  public List<JournalEntry> write(
      List<JournalEntry.Builder> entries, Consumer<List<JournalEntry>> applied)
      throws StrataException {
    checkWritable();
    return writes.write(entries, CallIdentity.current(), applied);
  }

  /**
   * Takes a snapshot of this master's state now (unless nothing changed since the last) and returns
   * its sequence; the log is purged behind it. Any master can.
   */
  public long checkpoint() throws StrataException {
    if (stateMachine.failure() != null) {
      throw notLeader();
    }
    SnapshotManagementRequest request =
        SnapshotManagementRequest.newCreate(
            localClient,
            server.getId(),
            RaftSettings.GROUP_ID,
            callIds.incrementAndGet(),
            WRITE_TIMEOUT.toMillis());
    RaftClientReply reply =
        RaftReplies.await(
            () -> server.snapshotManagementAsync(request), "take a snapshot of the journal");
    if (!reply.isSuccess()) {
      throw StrataException.internal(
          "The snapshot failed: " + reply.getException(), reply.getException());
    }
    checkpointCounter.increment();
    Snapshots.Found latest = stateMachine.latest();
    return latest == null ? store.appliedSequence() : latest.sequence();
  }

  /** Backups of the metastore. */
  public JournalBackups backups() {
    return backups;
  }

  /** The group of masters: its view and changes of its members. */
  public QuorumMembership membership() {
    return membership;
  }

  /** Hands the lead to another member; false when none took it (or there is none). */
  private boolean handOverLead() {
    List<RaftPeerId> others;
    try {
      others = membership.others();
    } catch (IOException e) {
      return false;
    }
    for (RaftPeerId other : others) {
      try {
        membership.transferLeadershipTo(other, other.toString());
        return true;
      } catch (StrataException e) {
        LOG.info("Master {} did not take the lead: {}", other, e.getMessage());
      }
    }
    return false;
  }

  // ---- state for GetMasterInfo and metrics ----

  public long lastSequence() {
    return store.appliedSequence();
  }

  public long lastCheckpointSequence() {
    Snapshots.Found latest = stateMachine.latest();
    return latest == null ? 0 : latest.sequence();
  }

  /** Changes waiting to be sent, and journal entries being committed. */
  public int[] backlog() {
    return writes.commit().backlog();
  }

  /** Closes after a final snapshot (a clean shutdown). */
  @Override
  public void close() throws IOException {
    close(true);
  }

  /** Closes; without a snapshot the next start replays the log, as after a crash. */
  public synchronized void close(boolean takeSnapshot) throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    role.close();
    writes.close();
    catchUpCheck.shutdownNow();
    try {
      if (takeSnapshot && stateMachine.failure() == null) {
        stateMachine.takeSnapshot();
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Final snapshot failed: {}", e.toString());
    } finally {
      RaftServer.Division d = null;
      try {
        d = division();
      } catch (IOException e) {
        // not running: nothing to wait for
      }
      try {
        server.close();
        awaitStopped(d);
      } finally {
        store.close();
      }
    }
  }

  /**
   * Waits (bounded) until the group's division has stopped applying and the journal port is free:
   * Ratis returns from close while both may still be winding down, and a master started again on
   * the same folders and port (a restart in one JVM) must not meet them.
   */
  private void awaitStopped(RaftServer.Division d) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    int port = quorum.self().journalPort();
    while (System.nanoTime() < deadline) {
      boolean divisionDone =
          d == null
              || d.getInfo().getLifeCycleState() == org.apache.ratis.util.LifeCycle.State.CLOSED;
      boolean portFree = port == 0 || portFree(quorum.self().journalHost(), port);
      if (divisionDone && portFree) {
        return;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    LOG.warn("The journal's Raft server was still stopping after 15 s");
  }

  private static boolean portFree(String host, int port) {
    try (java.net.ServerSocket s = new java.net.ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new java.net.InetSocketAddress(host, port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private void lostLead(RaftPeerId leader) {
    role.lost(leader);
    writes.failQueued(notLeader());
  }

  /** Turns the state machine's events into the master's role changes and listeners. */
  private final class Events implements MasterStateMachine.Listener {
    @Override
    public void applied(List<JournalEntry> entries) {
      Consumer<List<JournalEntry>> l = entriesListener;
      if (l != null && !entries.isEmpty()) {
        l.accept(entries);
      }
    }

    @Override
    public void advanced(long sequence) {
      LongConsumer a = appliedListener;
      if (a != null) {
        a.accept(sequence);
      }
    }

    @Override
    public void applyFailed(long index, Exception cause) {
      lostLead(null);
      Runnable l = failureListener;
      if (l != null) {
        try {
          l.run();
        } catch (RuntimeException e) {
          LOG.warn("The apply-failure listener failed", e);
        }
      }
    }

    @Override
    public void leaderReady() {
      if (stateMachine.failure() != null) {
        return;
      }
      if (!role.leading()) {
        leadsGained.increment();
      }
      role.gained(stateMachine.getLastAppliedTermIndex());
    }

    @Override
    public void leaderChanged(RaftPeerId leader) {
      if (leader != null) {
        leaderChanges.increment();
      }
      if (!server.getId().equals(leader)) {
        lostLead(leader);
      }
    }

    @Override
    public void reloaded() {
      Consumer<List<JournalEntry>> l = entriesListener;
      if (l != null) {
        l.accept(List.of());
      }
    }
  }
}
