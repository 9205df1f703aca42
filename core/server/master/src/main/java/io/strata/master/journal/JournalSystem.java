package io.strata.master.journal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.QuorumPeer;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.stream.Stream;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's replicated journal: every namespace change is a {@link JournalBatch} in an
 * Apache Ratis log, committed by a majority of the masters and applied by each to its own
 * {@link InodeStore} through {@link MasterStateMachine}. One master is a one-peer group on the
 * same path.
 *
 * <p>Only the leader writes ({@link #write} fails with UNAVAILABLE, naming the leader, on any
 * other master). A write returns once its batch is committed and applied here, so the change
 * is durable on a majority and visible to the caller's next read.
 *
 * <p>Files, under {@code strata.master.journal.dir}: {@code raft/<group>/current/} holds the
 * Ratis log segments, {@code raft/<group>/sm/<term>_<index>/} the snapshots ({@link
 * Snapshots}). Start-up loads the newest snapshot into the metastore folder and Ratis replays
 * the log after it; a follower that fell behind the leader's log is sent its snapshot.
 */
public final class JournalSystem implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(JournalSystem.class);
  /** Every Strata master group has this id: a cluster is one group. */
  static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(
      UUID.nameUUIDFromBytes("strata-masters".getBytes(StandardCharsets.UTF_8)));
  private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(30);
  private static final DateTimeFormatter BACKUP_TIME =
      DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

  static {
    // Ratis ends the JVM on some start-up failures (a journal port in use); a master reports
    // them as errors of its start instead, and tests run several masters in one JVM.
    org.apache.ratis.util.ExitUtils.disableSystemExit();
  }

  /** What the master does when this master's role changes. */
  public interface RoleListener {
    /** This master leads and has applied every earlier entry: start leader-only work. */
    void gainedLead();

    /** This master no longer leads: stop leader-only work. */
    void lostLead();
  }

  private final QuorumAddresses quorum;
  private final InodeStore store;
  private final MasterStateMachine stateMachine;
  private final RaftServer server;
  private final ClientId localClient = ClientId.randomId();
  private final AtomicLong callIds = new AtomicLong();
  private final CallHistory calls = new CallHistory();
  private final Events events = new Events();
  private volatile String boundRpcAddress;
  private final Path journalDir;
  private final Counter entriesCounter;
  private final Counter checkpointCounter;
  private final Counter leaderChanges;
  private final Counter leadsGained;
  private volatile LongConsumer appliedListener;
  private volatile Consumer<List<JournalEntry>> entriesListener;
  private volatile RoleListener roleListener;
  /** Set when this master leads; writes are accepted from then on. */
  private volatile boolean leading;
  /** Set once the master's leader-only work started after it took the lead. */
  private volatile boolean serving;
  private volatile boolean closed;
  /** Follower checks: its role, and whether it stalled behind the leader. */
  private final java.util.concurrent.ScheduledExecutorService catchUpCheck =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "master-catch-up-check");
        t.setDaemon(true);
        return t;
      });
  /** Runs role changes in order, off Ratis's threads (starting leader work writes entries). */
  private final java.util.concurrent.ExecutorService roleChanges =
      java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "master-role-change");
        t.setDaemon(true);
        return t;
      });

  private JournalSystem(StrataConfig conf, MeterRegistry registry) throws IOException {
    this.quorum = QuorumAddresses.from(conf);
    this.journalDir = Path.of(conf.getString(MasterKeys.JOURNAL_DIR));
    Path metastoreDir = Path.of(conf.getString(MasterKeys.METASTORE_DIR));
    // The metastore is rebuilt from the newest snapshot and the log on every start.
    Snapshots.deleteTree(metastoreDir);
    this.store = InodeStore.open(metastoreDir, conf.getInt(MasterKeys.INODE_CACHE_SIZE),
        registry);
    String restore = conf.getString(MasterKeys.RESTORE_BACKUP);
    this.stateMachine = new MasterStateMachine(store, localClient, calls,
        restore.isEmpty() ? null : Path.of(restore), events);
    this.entriesCounter = Counter.builder(MetricNames.MASTER_JOURNAL_ENTRIES)
        .description("Journal entries written").register(registry);
    this.checkpointCounter = Counter.builder(MetricNames.MASTER_JOURNAL_CHECKPOINTS)
        .description("Snapshots requested of the journal").register(registry);
    this.leaderChanges = Counter.builder(MetricNames.MASTER_JOURNAL_LEADER_CHANGES)
        .description("Leader changes this master saw (elections and transfers)")
        .register(registry);
    this.leadsGained = Counter.builder(MetricNames.MASTER_JOURNAL_FAILOVERS)
        .description("Times this master took over as leader").register(registry);
    try {
      this.server = RaftServer.newBuilder()
          .setServerId(RaftPeerId.valueOf(quorum.self().peerId()))
          .setGroup(RaftGroup.valueOf(GROUP_ID, peers(quorum.members())))
          .setStateMachine(stateMachine)
          // Recover the group's folder when it exists, format it when it does not.
          .setOption(org.apache.ratis.server.storage.RaftStorage.StartupOption.RECOVER)
          .setProperties(properties(conf, quorum, journalDir))
          .setParameters(new Parameters())
          .build();
    } catch (IOException | RuntimeException e) {
      store.close();
      throw e;
    }
    registerGauges(registry);
  }

  /**
   * Opens the metastore (empty until {@link #start}) and builds this master's Raft server
   * without starting it, so that the master can set its listeners first.
   */
  public static JournalSystem open(StrataConfig conf, MeterRegistry registry)
      throws IOException {
    return new JournalSystem(conf, registry);
  }

  /**
   * Starts the Raft server: the newest snapshot loads and the log after it replays. With one
   * master it returns once that master leads and serves; with several, once the server runs
   * (the group elects a leader when a majority is up).
   */
  public void start() throws IOException {
    try {
      server.start();
    } catch (IOException | RuntimeException e) {
      throw new IOException("Cannot start the journal in " + journalDir + ": "
          + rootMessage(e), e);
    }
    if (quorum.members().size() == 1) {
      awaitLead(Duration.ofSeconds(60));
    } else {
      StalledFollowerCheck stalled = new StalledFollowerCheck(quorum, this::division,
          this::leaderAddress);
      catchUpCheck.scheduleWithFixedDelay(stalled::check, 1, 1, TimeUnit.SECONDS);
      // Ratis reports a leader that steps down for want of a majority by no event of its own
      // on every path: the role is also checked.
      catchUpCheck.scheduleWithFixedDelay(this::checkRole, 200, 200, TimeUnit.MILLISECONDS);
    }
  }

  private void checkRole() {
    try {
      if (leading && !division().getInfo().isLeader()) {
        events.leaderChanged(division().getInfo().getLeaderId());
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

  private static RaftPeer peer(QuorumAddresses.Member m) {
    return RaftPeer.newBuilder().setId(m.peerId()).setAddress(m.journalAddress())
        .setClientAddress(m.rpcAddress()).build();
  }

  private static RaftProperties properties(StrataConfig conf, QuorumAddresses quorum,
      Path journalDir) throws IOException {
    RaftProperties p = new RaftProperties();
    Path raftDir = journalDir.resolve("raft");
    Files.createDirectories(raftDir);
    RaftServerConfigKeys.setStorageDir(p, List.of(raftDir.toFile()));
    GrpcConfigKeys.Server.setHost(p, quorum.self().journalHost());
    GrpcConfigKeys.Server.setPort(p, quorum.self().journalPort());
    long electionMs = Math.max(100, conf.getDuration(MasterKeys.JOURNAL_ELECTION_TIMEOUT)
        .toMillis());
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(electionMs,
        TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2 * electionMs,
        TimeUnit.MILLISECONDS));
    // A one-peer group elects itself at once instead of waiting out a first timeout.
    if (quorum.members().size() == 1) {
      RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, TimeDuration.valueOf(10,
          TimeUnit.MILLISECONDS));
      RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, TimeDuration.valueOf(20,
          TimeUnit.MILLISECONDS));
    }
    RaftServerConfigKeys.Log.setSegmentSizeMax(p,
        SizeInBytes.valueOf(conf.getBytes(MasterKeys.JOURNAL_SEGMENT_SIZE)));
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    // Snapshots are rare (every strata.master.journal.checkpoint.entries): purge at each.
    RaftServerConfigKeys.Log.setPurgeGap(p, 1);
    // fsync off (the default) still writes every entry before it is acknowledged; it does not
    // wait for the device. With several masters a majority holds each entry anyway.
    RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, !conf.getBoolean(MasterKeys.JOURNAL_FSYNC));
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p,
        Math.max(1, conf.getLong(MasterKeys.CHECKPOINT_ENTRIES)));
    RaftServerConfigKeys.Snapshot.setCreationGap(p, 1);
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
    return p;
  }

  /** The innermost cause's message: Ratis wraps the state machine's own errors in several. */
  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  /** The folder of the group's Raft log and snapshots under a journal folder. */
  public static Path groupDir(Path journalDir) {
    return journalDir.resolve("raft").resolve(GROUP_ID.getUuid().toString());
  }

  /** Waits until this master leads and is ready to serve. */
  public void awaitLead(Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!serving) {
      if (System.nanoTime() > deadline) {
        throw new IOException("This master did not become the leader of its journal within "
            + timeout.toSeconds() + " s; see its log for Raft election messages");
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("Interrupted while waiting to lead", e);
      }
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
    return leading && serving;
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
        return selfAddress();
      }
      RaftPeer peer = d.getRaftConf().getPeer(leader);
      return peer == null ? null : peer.getClientAddress();
    } catch (IOException e) {
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
    return server.getDivision(GROUP_ID);
  }

  /** The error of a call that only the leader may serve. */
  public StrataException notLeader() {
    String leader = leaderAddress();
    return StrataException.unavailable("This master (" + selfAddress()
        + ") is not the leader; " + (leader == null ? "an election is in progress, retry shortly"
        : "the leader is " + leader), null);
  }

  /** Sets the lock that applies of other masters' entries take (the namespace write lock). */
  public void setReplicaLock(Lock lock) {
    stateMachine.setReplicaLock(lock);
  }

  public void onRoleChange(RoleListener listener) {
    this.roleListener = listener;
  }

  /**
   * Tells {@code listener} the last applied sequence after every applied batch, in order, and
   * after what the batch's own callback published.
   */
  public void onApplied(LongConsumer listener) {
    this.appliedListener = listener;
  }

  /** Tells {@code listener} every applied batch's entries, on every master. */
  public void onEntriesApplied(Consumer<List<JournalEntry>> listener) {
    this.entriesListener = listener;
  }

  public List<JournalEntry> write(List<JournalEntry.Builder> entries) throws StrataException {
    return write(entries, null);
  }

  /**
   * Commits the entries as one batch and applies them; then runs {@code applied} with the
   * entries as applied (with their sequences) before any later batch applies, so what it
   * publishes of them is in journal order with every other write. Fails with UNAVAILABLE on a
   * master that does not lead.
   */
  public synchronized List<JournalEntry> write(List<JournalEntry.Builder> entries,
      Consumer<List<JournalEntry>> applied) throws StrataException {
    if (entries.isEmpty()) {
      return List.of();
    }
    if (closed) {
      throw StrataException.unavailable("The master is shutting down; retry on its restart",
          null);
    }
    if (!leading) {
      throw notLeader();
    }
    if (stateMachine.failure() != null) {
      throw StrataException.internal("This master could not apply a journal entry ("
          + stateMachine.failure().getMessage() + "); restart it", stateMachine.failure());
    }
    JournalBatch.Builder batch = JournalBatch.newBuilder();
    for (JournalEntry.Builder e : entries) {
      batch.addEntries(e.clearSequence());
    }
    CallIdentity caller = CallIdentity.current();
    if (caller != null) {
      batch.setClientId(caller.clientId()).setCallId(caller.callId());
    }
    long callId = callIds.incrementAndGet();
    List<List<JournalEntry>> result = new ArrayList<>(1);
    stateMachine.expect(callId, written -> {
      result.add(written);
      if (applied != null) {
        applied.accept(written);
      }
    });
    RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(localClient)
        .setServerId(server.getId()).setGroupId(GROUP_ID).setCallId(callId)
        .setMessage(Message.valueOf(ByteString.copyFrom(batch.build().toByteArray())))
        .setType(RaftClientRequest.writeRequestType()).build();
    RaftClientReply reply = await(() -> server.submitClientRequestAsync(request),
        "write to the journal");
    if (!reply.isSuccess() || result.isEmpty()) {
      stateMachine.forget(callId);
      if (reply.getNotLeaderException() != null || reply.getLeaderNotReadyException() != null) {
        throw notLeader();
      }
      throw StrataException.unavailable("The journal did not take the change ("
          + (reply.getException() == null ? "no answer" : reply.getException().getMessage())
          + "); retry", reply.getException());
    }
    entriesCounter.increment(entries.size());
    return result.get(0);
  }

  /** One request to this master's Raft server. */
  private interface RaftCall {
    CompletableFuture<RaftClientReply> send() throws IOException;
  }

  /**
   * Sends a request to this master's Raft server and waits (bounded) for its reply; every way
   * it can fail becomes UNAVAILABLE saying what could not be done ({@code what}, a verb phrase).
   */
  private static RaftClientReply await(RaftCall call, String what) throws StrataException {
    try {
      return call.send().get(WRITE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (IOException e) {
      throw StrataException.unavailable("Cannot " + what + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StrataException.unavailable("Interrupted while trying to " + what, e);
    } catch (ExecutionException e) {
      throw StrataException.unavailable("Cannot " + what + ": " + e.getCause().getMessage(),
          e.getCause());
    } catch (TimeoutException e) {
      throw StrataException.unavailable("Cannot " + what + ": nothing was committed within "
          + WRITE_TIMEOUT.toSeconds() + " s (has the group lost its majority?)", e);
    }
  }

  /**
   * Takes a snapshot of this master's state now (unless nothing changed since the last) and
   * returns its sequence; the log is purged behind it. Any master can.
   */
  public long checkpoint() throws StrataException {
    SnapshotManagementRequest request = SnapshotManagementRequest.newCreate(localClient,
        server.getId(), GROUP_ID, callIds.incrementAndGet(), WRITE_TIMEOUT.toMillis());
    RaftClientReply reply = await(() -> server.snapshotManagementAsync(request),
        "take a snapshot of the journal");
    if (!reply.isSuccess()) {
      throw StrataException.internal("The snapshot failed: " + reply.getException(),
          reply.getException());
    }
    checkpointCounter.increment();
    Snapshots.Found latest = stateMachine.latest();
    return latest == null ? store.appliedSequence() : latest.sequence();
  }

  /** What a backup wrote. */
  public record Backup(Path dir, long index, long sequence, long inodeCount) {}

  /**
   * Writes a backup of the metastore at one applied index into a new folder under
   * {@code parent}, while the master serves (applies wait for the copy, a RocksDB checkpoint
   * of hard links).
   */
  public Backup backup(Path parent) throws IOException {
    Files.createDirectories(parent);
    Snapshots.Found b = stateMachine.atAppliedIndex(at -> {
      Path dir = parent.resolve("backup-" + LocalDateTime.now().format(BACKUP_TIME) + "-"
          + at.getIndex());
      return Snapshots.write(store, dir, HeaderFile.BACKUP_KIND, at.getTerm(), at.getIndex());
    });
    LOG.info("Backup written to {} at index {} (sequence {})", b.dir(), b.index(),
        b.sequence());
    return new Backup(b.dir(), b.index(), b.sequence(), b.header().getInodeCount());
  }

  /** Removes all but the {@code retain} newest backups in {@code parent}. */
  public static void pruneBackups(Path parent, int retain) throws IOException {
    if (!Files.isDirectory(parent)) {
      return;
    }
    List<Path> backups = new ArrayList<>();
    try (Stream<Path> list = Files.list(parent)) {
      list.filter(p -> p.getFileName().toString().startsWith("backup-")).sorted()
          .forEach(backups::add);
    }
    for (int i = 0; i < backups.size() - retain; i++) {
      Snapshots.deleteTree(backups.get(i));
    }
  }

  // ---- quorum ----

  /** The group as this master sees it. */
  public record QuorumView(String groupId, long term, String leaderAddress, long commitIndex,
      List<QuorumPeer> peers) {}

  public QuorumView quorumInfo() throws IOException {
    RaftServer.Division d = division();
    RaftPeerId leader = d.getInfo().getLeaderId();
    long commit = d.getRaftLog().getLastCommittedIndex();
    List<QuorumPeer> peers = new ArrayList<>();
    java.util.Map<String, Long> known = new java.util.HashMap<>();
    for (CommitInfoProto c : d.getCommitInfos()) {
      known.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex());
    }
    for (RaftPeer p : d.getRaftConf().getAllPeers()) {
      boolean self = p.getId().equals(server.getId());
      boolean isLeader = p.getId().equals(leader);
      long applied = self ? d.getInfo().getLastAppliedIndex()
          : known.getOrDefault(p.getId().toString(), -1L);
      String role = self ? d.getInfo().getCurrentRole().name()
          : isLeader ? RaftPeerRole.LEADER.name()
          : leader != null ? RaftPeerRole.FOLLOWER.name() : "UNKNOWN";
      String address = self ? selfAddress()
          : p.getClientAddress() == null ? "" : p.getClientAddress();
      peers.add(QuorumPeer.newBuilder().setAddress(address).setJournalAddress(p.getAddress())
          .setLeader(isLeader)
          .setAppliedIndex(applied).setLag(applied < 0 ? -1 : Math.max(0, commit - applied))
          .setRole(role).build());
    }
    String leaderAddress = leaderAddress();
    return new QuorumView(GROUP_ID.getUuid().toString(), d.getInfo().getCurrentTerm(),
        leaderAddress == null ? "" : leaderAddress, commit, peers);
  }

  /** Hands the lead to the master with that gRPC or journal address. */
  public void transferLeadership(String address) throws StrataException {
    RaftPeerId target = peerIdOf(address);
    TransferLeadershipRequest request = new TransferLeadershipRequest(localClient,
        server.getId(), GROUP_ID, callIds.incrementAndGet(), target, WRITE_TIMEOUT.toMillis());
    RaftClientReply reply = await(() -> server.transferLeadershipAsync(request),
        "transfer leadership");
    if (!reply.isSuccess()) {
      // Not UNAVAILABLE: clients retry that, and the reason would be lost in their give-up.
      throw StrataException.failedPrecondition("Leadership did not move to " + address + ": "
          + reply.getException().getMessage());
    }
  }

  private RaftPeerId peerIdOf(String address) throws StrataException {
    try {
      for (RaftPeer p : division().getRaftConf().getAllPeers()) {
        if (address.equals(p.getAddress()) || address.equals(p.getClientAddress())) {
          return p.getId();
        }
      }
    } catch (IOException e) {
      throw StrataException.unavailable("The journal is not running: " + e.getMessage(), e);
    }
    throw StrataException.invalidArgument("No master of the group has the address " + address
        + "; `strata fsadmin journal quorum info` lists them");
  }

  /** Adds a master (already started with the new address list) to the group. */
  public List<QuorumPeer> addPeer(String rpcAddress, String journalAddress)
      throws IOException {
    if (!leading) {
      throw notLeader();
    }
    List<RaftPeer> peers = new ArrayList<>(division().getRaftConf().getCurrentPeers());
    for (RaftPeer p : peers) {
      if (p.getAddress().equals(journalAddress) || rpcAddress.equals(p.getClientAddress())) {
        throw new StrataException(io.strata.common.error.ErrorCode.ALREADY_EXISTS,
            "The group already has a master at " + p.getClientAddress() + " (journal "
            + p.getAddress() + ")");
      }
    }
    peers.add(peer(new QuorumAddresses.Member(rpcAddress, journalAddress)));
    setConfiguration(peers);
    return quorumInfo().peers();
  }

  /** Removes a master from the group. */
  public List<QuorumPeer> removePeer(String address) throws IOException {
    if (!leading) {
      throw notLeader();
    }
    RaftPeerId id = peerIdOf(address);
    List<RaftPeer> peers = new ArrayList<>();
    for (RaftPeer p : division().getRaftConf().getCurrentPeers()) {
      if (!p.getId().equals(id)) {
        peers.add(p);
      }
    }
    if (peers.isEmpty()) {
      throw StrataException.invalidArgument("Cannot remove the last master of the group");
    }
    setConfiguration(peers);
    return quorumInfo().peers();
  }

  private void setConfiguration(List<RaftPeer> peers) throws StrataException {
    SetConfigurationRequest request = new SetConfigurationRequest(localClient, server.getId(),
        GROUP_ID, callIds.incrementAndGet(), peers);
    RaftClientReply reply = await(() -> server.setConfigurationAsync(request),
        "change the group's members");
    if (!reply.isSuccess()) {
      throw StrataException.failedPrecondition("The group's members did not change: "
          + reply.getException().getMessage());
    }
  }

  // ---- state for GetMasterInfo and metrics ----

  public long lastSequence() {
    return store.appliedSequence();
  }

  public long lastCheckpointSequence() {
    Snapshots.Found latest = stateMachine.latest();
    return latest == null ? 0 : latest.sequence();
  }

  private void registerGauges(MeterRegistry registry) {
    Gauge.builder(MetricNames.MASTER_JOURNAL_ROLE, this, j -> j.leading ? 1 : 0)
        .description("1 while this master leads the group, 0 otherwise").register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_TERM, this, j -> j.info(i -> i.getCurrentTerm()))
        .description("Current Raft term").register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_APPLIED_INDEX, this,
            j -> j.info(i -> i.getLastAppliedIndex()))
        .description("Last journal index applied to the metastore").register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_COMMIT_INDEX, this, JournalSystem::commitIndex)
        .description("Last journal index known committed").register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_LOG_BYTES, this, JournalSystem::logBytes)
        .description("Bytes of journal log segments on this master").register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_SNAPSHOT_AGE, this, JournalSystem::snapshotAge)
        .description("Seconds since the newest snapshot was written (-1: none)")
        .register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_SNAPSHOT_BYTES, this, JournalSystem::snapshotBytes)
        .description("Bytes of the newest snapshot").register(registry);
  }

  private double info(java.util.function.ToLongFunction<org.apache.ratis.server.DivisionInfo> f) {
    try {
      return f.applyAsLong(division().getInfo());
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  private double commitIndex() {
    try {
      return division().getRaftLog().getLastCommittedIndex();
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  private double logBytes() {
    return folderBytes(groupDir(journalDir).resolve("current"));
  }

  private double snapshotAge() {
    Snapshots.Found s = stateMachine.latest();
    return s == null ? -1
        : (System.currentTimeMillis() - s.header().getCreatedMs()) / 1000.0;
  }

  private double snapshotBytes() {
    Snapshots.Found s = stateMachine.latest();
    return s == null ? 0 : folderBytes(s.dir());
  }

  private static double folderBytes(Path dir) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.map(Path::toFile).filter(File::isFile).mapToLong(File::length).sum();
    } catch (IOException | java.io.UncheckedIOException e) {
      return -1;
    }
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
    leading = false;
    serving = false;
    roleChanges.shutdown();
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
   * Waits (bounded) until the group's division has stopped applying and the journal port is
   * free: Ratis returns from close while both may still be winding down, and a master started
   * again on the same folders and port (a restart in one JVM) must not meet them.
   */
  private void awaitStopped(RaftServer.Division d) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    int port = quorum.self().journalPort();
    while (System.nanoTime() < deadline) {
      boolean divisionDone = d == null || d.getInfo().getLifeCycleState().isClosingOrClosed()
          && d.getInfo().getLifeCycleState() == org.apache.ratis.util.LifeCycle.State.CLOSED;
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

  /** Turns the state machine's events into the master's role changes and listeners. */
  private final class Events implements MasterStateMachine.Listener {
    @Override
    public void applied(List<JournalEntry> entries) {
      Consumer<List<JournalEntry>> l = entriesListener;
      if (l != null && !entries.isEmpty()) {
        l.accept(entries);
      }
      LongConsumer a = appliedListener;
      if (a != null) {
        a.accept(store.appliedSequence());
      }
    }

    @Override
    public synchronized void leaderReady() {
      if (leading) {
        return;
      }
      LOG.info("This master ({}) leads the journal from index {}", quorum.self().rpcAddress(),
          stateMachine.getLastAppliedTermIndex());
      leadsGained.increment();
      leading = true;
      roleChanges.execute(() -> {
        if (!leading) {
          return;
        }
        RoleListener l = roleListener;
        try {
          if (l != null) {
            l.gainedLead();
          }
          serving = true;
        } catch (RuntimeException e) {
          LOG.error("Starting the leader's work failed; stepping back", e);
        }
      });
    }

    @Override
    public synchronized void leaderChanged(RaftPeerId leader) {
      if (leader != null) {
        leaderChanges.increment();
      }
      if (leading && !server.getId().equals(leader)) {
        leading = false;
        serving = false;
        LOG.info("This master ({}) no longer leads; the leader is {}",
            quorum.self().rpcAddress(), leader);
        roleChanges.execute(() -> {
          RoleListener l = roleListener;
          if (l != null) {
            l.lostLead();
          }
        });
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
