package io.strata.master;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.strata.common.DaemonThreads;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.ConfigException;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.metrics.MetricNames;
import io.strata.master.block.BlockMasterWorkerService;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.file.ChangeFeed;
import io.strata.master.file.FileSystemMasterService;
import io.strata.master.file.InodeTree;
import io.strata.master.file.MountTable;
import io.strata.master.file.Namespace;
import io.strata.master.file.SyncInterval;
import io.strata.master.file.SyncPolicy;
import io.strata.master.file.UfsMetadataLoader;
import io.strata.master.file.WriterLeases;
import io.strata.master.journal.CallIdentity;
import io.strata.master.journal.JournalBackups;
import io.strata.master.journal.JournalSystem;
import io.strata.master.load.LoadJobManager;
import io.strata.master.load.LoadMasterService;
import io.strata.master.persist.PersistMasterService;
import io.strata.master.persist.PersistScheduler;
import io.strata.master.ttl.TtlActions;
import io.strata.master.ttl.TtlChecker;
import io.strata.master.ufs.StoreGuards;
import io.strata.master.upgrade.ClientDirectory;
import io.strata.master.upgrade.UpgradeMasterService;
import io.strata.server.common.FolderLock;
import io.strata.server.common.ProcessMain;
import io.strata.server.common.ProcessMetricsRegistry;
import io.strata.server.common.RpcCalls;
import io.strata.server.common.VersionCheck;
import io.strata.server.common.WebServer;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderStores;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master process: the namespace and its journal, the worker registry, the gRPC services {@code
 * FileSystemMaster}, {@code BlockMasterWorker} and {@code LoadMaster} (load jobs), and the web
 * endpoint with metrics. {@link #start} recovers the namespace from the journal before serving;
 * {@link #close} stops serving, takes a checkpoint and releases every file, so the same folders can
 * be opened again by a new instance in the same JVM (as tests do).
 */
public final class MasterServer implements ProcessMain.Server {
  private static final Logger LOG = LoggerFactory.getLogger(MasterServer.class);

  /** Under-store entries turned into inodes per journal write while loading a listing. */
  private static final int LOAD_BATCH = 1000;

  private final StrataConfig conf;
  private final String rootUfs;
  private final Map<String, String> rootOptions;
  private final SyncInterval syncInterval;
  private PrometheusMeterRegistry registry;
  private UnderStores stores;
  private JournalSystem journal;
  private FolderLock journalLock;
  private WorkerRegistry workers;
  private Namespace namespace;
  private ChangeFeed changes;
  private volatile LoadJobManager loadJobs;

  /** Runs while this master leads; null otherwise or when the checks are off. */
  private volatile TtlChecker ttlChecker;

  private volatile WriterLeases writerLeases;

  private final Duration ttlCheckInterval;

  /** Persists ASYNC_THROUGH files while this master leads; null otherwise. */
  private volatile PersistScheduler persistScheduler;

  /** Orders taking and giving up the lead (run on the journal's role-change thread). */
  private final Object leadLock = new Object();

  private MountTable mounts;
  private StoreGuards guards;
  private InodeTree tree;

  /** Runs when the journal stops this master (an entry it cannot apply); null: nothing. */
  private volatile Runnable onJournalFailure;

  private ExecutorService rpcExecutor;
  private ExecutorService loadExecutor;
  private ScheduledExecutorService housekeeping;
  private Server grpc;
  private WebServer web;
  private volatile boolean closed;

  /** Validates the configuration; nothing is opened until {@link #start}. */
  public MasterServer(StrataConfig conf) {
    this.conf = conf;
    this.rootUfs = conf.getString(MasterKeys.ROOT_UFS);
    this.rootOptions = parseOptions(conf.getString(MasterKeys.ROOT_UFS_OPTIONS));
    // Under-store URIs keep names verbatim, so only the scheme separator is checked here; the
    // store itself validates the rest when the root is mounted.
    if (!rootUfs.matches("[A-Za-z][A-Za-z0-9+.-]*://.*")) {
      throw new ConfigException(
          "strata.master.root.ufs has no scheme: "
              + rootUfs
              + " (write file://"
              + rootUfs
              + " for a local folder)");
    }
    if (conf.getInt(MasterKeys.RPC_THREADS) < 1) {
      throw new ConfigException("strata.master.rpc.threads must be at least 1");
    }
    if (conf.getInt(MasterKeys.METADATA_LOAD_THREADS) < 1) {
      throw new ConfigException(MasterKeys.METADATA_LOAD_THREADS.name() + " must be at least 1");
    }
    this.ttlCheckInterval = conf.getDuration(MasterKeys.TTL_CHECK_INTERVAL);
    if (ttlCheckInterval.isNegative()) {
      throw new ConfigException(
          MasterKeys.TTL_CHECK_INTERVAL.name()
              + " must not be negative (0 turns the time-to-live checks off)");
    }
    try {
      this.syncInterval = SyncInterval.parse(conf.getString(MasterKeys.UFS_SYNC_INTERVAL));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(
          "Bad value for configuration key '"
              + MasterKeys.UFS_SYNC_INTERVAL.name()
              + "': "
              + e.getMessage());
    }
  }

  @Override
  public synchronized void start() throws IOException {
    long startTime = System.currentTimeMillis();
    registry = ProcessMetricsRegistry.create();
    PersistScheduler.registerGauges(registry, () -> persistScheduler);
    stores = new UnderStores();
    try {
      // Taken before anything is read or restored: a second master on the same folders would
      // otherwise replace the running master's metastore while it works.
      journalLock =
          FolderLock.acquire(
              Path.of(conf.getString(MasterKeys.JOURNAL_DIR)),
              "master journal",
              MasterKeys.JOURNAL_DIR.name());
      prepareRootStore();
      openJournalAndNamespace();
      startRpcServer(startTime);
      web =
          new WebServer(
              conf.getString(MasterKeys.BIND_HOST), conf.getInt(MasterKeys.WEB_PORT), registry);
      scheduleHousekeeping();
    } catch (IOException | RuntimeException e) {
      release(false);
      throw e;
    }
    LOG.info(
        "Master serving gRPC on {}:{} and web on port {}; root mount {}",
        conf.getString(MasterKeys.BIND_HOST),
        rpcPort(),
        webPort(),
        rootUfs);
  }

  /**
   * Opens the journal and the metastore, and builds on them the namespace and what it needs (the
   * worker registry, the mount table, metadata loads and syncs, the change feed); then starts the
   * journal, which takes or follows the lead.
   */
  private void openJournalAndNamespace() throws IOException {
    journal = JournalSystem.open(conf, registry);
    // The registry checks block reports against the namespace, which needs the registry for
    // cached bytes: the lambda reads the field once both exist.
    workers =
        new WorkerRegistry(
            conf.getDuration(MasterKeys.WORKER_TIMEOUT),
            fileId -> namespace.isFile(fileId),
            registry);
    mounts = new MountTable(rootUfs, rootOptions, journal.store().mounts());
    guards = new StoreGuards(conf, registry);
    String owner = System.getProperty("user.name", "");
    UfsMetadataLoader loader =
        new UfsMetadataLoader(
            stores, guards, conf.getBytes(MasterKeys.BLOCK_SIZE), owner, groupOf(owner), registry);
    SyncPolicy sync =
        new SyncPolicy(
            mounts, syncInterval, conf.getInt(MasterKeys.UFS_SYNC_TIME_CACHE_SIZE), registry);
    changes =
        new ChangeFeed(
            journal.lastSequence(),
            conf.getInt(MasterKeys.WATCH_HISTORY_SIZE),
            conf.getInt(MasterKeys.WATCH_QUEUE_SIZE),
            registry);
    journal.onApplied(changes::advance);
    journal.onEntriesApplied(this::followMountChanges);
    journal.onApplyFailure(this::journalFailed);
    tree = new InodeTree(journal.store(), mounts, loader, workers, sync);
    journal.setReadersLock(tree.readersLock());
    namespace =
        Namespace.open(
            tree,
            journal,
            changes,
            registry,
            conf.getInt(MasterKeys.UFS_THREADS),
            conf.getDuration(MasterKeys.PATH_LOCK_TIMEOUT),
            LOAD_BATCH);
    journal.onRoleChange(
        new JournalSystem.RoleListener() {
          @Override
          public void gainedLead() {
            takeLead();
          }

          @Override
          public void lostLead() {
            giveUpLead();
          }
        });
    journal.start();
    // A follower serves nothing, but its mount table must match what it applied when it
    // takes the lead; the leader reloaded it already.
    mounts.reload(journal.store().mounts());
  }

  /** Starts the gRPC server with every master service behind the call interceptors. */
  private void startRpcServer(long startTime) throws IOException {
    RpcCalls calls = new RpcCalls(registry, MetricNames.MASTER_RPC_LATENCY);
    rpcExecutor =
        Executors.newFixedThreadPool(
            conf.getInt(MasterKeys.RPC_THREADS), DaemonThreads.numbered("master-rpc-"));
    loadExecutor =
        Executors.newFixedThreadPool(
            conf.getInt(MasterKeys.METADATA_LOAD_THREADS),
            DaemonThreads.numbered("master-metadata-load-"));
    String host = conf.getString(MasterKeys.BIND_HOST);
    ClientDirectory clients = new ClientDirectory(java.time.Duration.ofHours(1));
    grpc =
        NettyServerBuilder.forAddress(
                new InetSocketAddress(host, conf.getInt(CommonKeys.MASTER_RPC_PORT)))
            .executor(rpcExecutor)
            // Clients of several masters ping every 2 s to notice a paused leader.
            .permitKeepAliveTime(1, TimeUnit.SECONDS)
            .permitKeepAliveWithoutCalls(true)
            .addTransportFilter(
                new io.grpc.ServerTransportFilter() {
                  @Override
                  public void transportTerminated(io.grpc.Attributes transport) {
                    clients.disconnected(transport.get(io.grpc.Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
                  }
                })
            .addService(
                new FileSystemMasterService(
                    namespace,
                    workers,
                    journal,
                    changes,
                    calls,
                    conf.getInt(MasterKeys.LIST_PAGE_SIZE),
                    startTime,
                    loadExecutor,
                    clients,
                    () -> writerLeases))
            .addService(new BlockMasterWorkerService(workers, calls))
            .addService(new LoadMasterService(() -> loadJobs, calls))
            .addService(new PersistMasterService(namespace, () -> persistScheduler, calls))
            .addService(new JournalMasterService(journal, calls, conf))
            .addService(new UpgradeMasterService(journal, calls))
            .intercept(new RetriedCallReplay(journal.calls(), namespace))
            .intercept(new LeaderGate(journal))
            .intercept(CallIdentity.interceptor())
            // Outermost: a caller of a protocol this release does not serve gets nothing else.
            .intercept(new VersionCheck("master", clients::served))
            .build()
            .start();
    journal.setBoundRpcAddress(conf.getString(CommonKeys.MASTER_HOSTNAME) + ":" + grpc.getPort());
  }

  /** Schedules the worker-loss check and the periodic checkpoints and backups. */
  private void scheduleHousekeeping() {
    housekeeping =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("master-worker-check"));
    long checkMs = Math.max(10, conf.getDuration(MasterKeys.WORKER_TIMEOUT).toMillis() / 4);
    // Each housekeeping task logs its own failures and runs until the executor shuts down.
    var unusedWorkerCheck =
        housekeeping.scheduleWithFixedDelay(
            this::markLostWorkers, checkMs, checkMs, TimeUnit.MILLISECONDS);
    long snapshotMs = conf.getDuration(MasterKeys.CHECKPOINT_PERIOD).toMillis();
    if (snapshotMs > 0) {
      var unusedSnapshots =
          housekeeping.scheduleWithFixedDelay(
              this::periodicSnapshot, snapshotMs, snapshotMs, TimeUnit.MILLISECONDS);
    }
    long backupMs = conf.getDuration(MasterKeys.BACKUP_INTERVAL).toMillis();
    if (backupMs > 0) {
      var unusedBackups =
          housekeeping.scheduleWithFixedDelay(
              this::scheduledBackup, backupMs, backupMs, TimeUnit.MILLISECONDS);
    }
  }

  /** Parses {@code k=v,k=v}; a pair without '=' fails naming the key that holds it. */
  static Map<String, String> parseOptions(String text) {
    Map<String, String> options = new java.util.LinkedHashMap<>();
    for (String pair : text.split(",")) {
      if (pair.isBlank()) {
        continue;
      }
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new ConfigException(
            MasterKeys.ROOT_UFS_OPTIONS.name()
                + " holds '"
                + pair.trim()
                + "', which is not key=value (write e.g. s3.path.style=true,s3.region=us-east-1)");
      }
      options.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
    }
    return options;
  }

  /** A local root folder is created when missing; another store must already exist. */
  private void prepareRootStore() throws IOException {
    if (rootUfs.startsWith("file:")) {
      UnderFileSystem ufs = stores.get(rootUfs);
      if (!ufs.exists(rootUfs)) {
        ufs.mkdirs(rootUfs, true);
        LOG.info("Created the root under-store folder {}", rootUfs);
      }
    }
  }

  /** The primary group of the master's user, read from a folder it just created. */
  private String groupOf(String owner) {
    try {
      Path dir = Path.of(conf.getString(MasterKeys.JOURNAL_DIR));
      return Files.readAttributes(dir, PosixFileAttributes.class).group().getName();
    } catch (IOException | UnsupportedOperationException e) {
      return owner;
    }
  }

  /**
   * Starts what only the leader does, once it has applied every earlier entry: the mount table and
   * change feed from the applied state, the root inode, the load jobs (resumed from their journaled
   * state) and the time-to-live checks. Workers register with it on their next heartbeat.
   */
  private void takeLead() {
    synchronized (leadLock) {
      if (closed) {
        return;
      }
      mounts.reload(journal.store().mounts());
      changes.restartAt(journal.lastSequence());
      workers.clear();
      namespace.resetChanges();
      try {
        namespace.ensureRoot();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      loadJobs = new LoadJobManager(namespace, workers, journal, conf, registry);
      loadJobs.start();
      if (!ttlCheckInterval.isZero()) {
        ttlChecker = new TtlChecker(journal.store(), new TtlActions(namespace), registry);
        ttlChecker.start(ttlCheckInterval);
      }
      Duration leaseTimeout = conf.getDuration(MasterKeys.LEASE_TIMEOUT);
      if (!leaseTimeout.isZero() && !leaseTimeout.isNegative()) {
        WriterLeases leases = new WriterLeases(journal.store(), namespace, leaseTimeout, registry);
        leases.start();
        writerLeases = leases;
      }
      PersistScheduler persists =
          new PersistScheduler(
              journal.store(),
              namespace,
              workers,
              conf.getInt(MasterKeys.PERSIST_THREADS),
              conf.getDuration(MasterKeys.PERSIST_TIMEOUT),
              registry);
      persists.start(conf.getDuration(MasterKeys.PERSIST_INTERVAL));
      persistScheduler = persists;
    }
  }

  private void stopPersists() {
    synchronized (leadLock) {
      PersistScheduler persists = persistScheduler;
      persistScheduler = null;
      if (persists != null) {
        persists.close();
      }
    }
  }

  /** Stops the leader's work on a master that lost the lead (it serves nothing now). */
  private void giveUpLead() {
    synchronized (leadLock) {
      LoadJobManager jobs = loadJobs;
      loadJobs = null;
      if (jobs != null) {
        jobs.close();
      }
      stopLeaderChecks();
      stopPersists();
      workers.clear();
      namespace.resetChanges();
    }
  }

  /**
   * Makes the process end (status 70) when the journal stops this master because it cannot apply a
   * committed entry, so that whatever runs it starts it again, from its last good snapshot. Without
   * it (a master embedded in another program), the master stays up and answers every call with the
   * reason.
   */
  public void exitOnJournalFailure() {
    this.onJournalFailure =
        () -> {
          Thread t = new Thread(() -> System.exit(70), "master-journal-failure-exit");
          t.start();
        };
  }

  private void journalFailed() {
    LOG.error(
        "This master stopped: it could not apply a committed journal entry and left the"
            + " group; it recovers from its last snapshot when started again");
    Runnable r = onJournalFailure;
    if (r != null) {
      r.run();
    }
  }

  private void stopLeaderChecks() {
    synchronized (leadLock) {
      if (ttlChecker != null) {
        ttlChecker.close();
        ttlChecker = null;
      }
      WriterLeases leases = writerLeases;
      writerLeases = null;
      if (leases != null) {
        leases.close();
      }
    }
  }

  /** Keeps a follower's mount table in step with the mounts it applies. */
  private void followMountChanges(java.util.List<io.strata.proto.journal.JournalEntry> entries) {
    boolean reload = entries.isEmpty();
    for (io.strata.proto.journal.JournalEntry e : entries) {
      reload |= e.hasAddMount() || e.hasDeleteMount();
    }
    if (reload && mounts != null) {
      mounts.reload(journal.store().mounts());
    }
  }

  private void periodicSnapshot() {
    try {
      journal.checkpoint();
    } catch (IOException | RuntimeException e) {
      LOG.warn("Periodic snapshot failed: {}", e.toString());
    }
  }

  private void scheduledBackup() {
    if (!journal.isLeader()) {
      return;
    }
    try {
      Path dir = Path.of(conf.getString(MasterKeys.BACKUP_DIR));
      journal.backups().backup(dir);
      JournalBackups.prune(dir, Math.max(1, conf.getInt(MasterKeys.BACKUP_RETAIN)));
    } catch (IOException | RuntimeException e) {
      LOG.warn("Scheduled backup failed: {}", e.toString(), e);
    }
  }

  private void markLostWorkers() {
    try {
      workers.markLostWorkers();
    } catch (RuntimeException e) {
      LOG.warn("Checking for lost workers failed: {}", e.toString(), e);
    }
  }

  /** The bound gRPC port (the real one when the configured port was 0). */
  /** The time-to-live checker while this master leads, else null. */
  TtlChecker ttlChecker() {
    return ttlChecker;
  }

  public int rpcPort() {
    return grpc.getPort();
  }

  /** The bound web port (the real one when the configured port was 0). */
  public int webPort() {
    return web.port();
  }

  /** The metrics of this master, for tests and embedding. */
  public PrometheusMeterRegistry meterRegistry() {
    return registry;
  }

  /** Stops serving, takes a checkpoint, and releases every file and port. */
  @Override
  public void close() throws IOException {
    release(true);
  }

  /** The journal, for tests and embedding. */
  public JournalSystem journal() {
    return journal;
  }

  /**
   * Stops serving and releases files without a snapshot, leaving the journal as a crash would: the
   * next start replays the log. For tests of recovery.
   */
  void closeWithoutCheckpoint() throws IOException {
    release(false);
  }

  private synchronized void release(boolean checkpoint) throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    if (grpc != null) {
      grpc.shutdown();
      // Change streams last as long as their clients: end them, or termination waits.
      if (changes != null) {
        changes.close();
      }
      try {
        if (!grpc.awaitTermination(10, TimeUnit.SECONDS)) {
          grpc.shutdownNow();
        }
      } catch (InterruptedException e) {
        grpc.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    if (changes != null) {
      changes.close();
    }
    if (rpcExecutor != null) {
      rpcExecutor.shutdownNow();
    }
    if (loadExecutor != null) {
      loadExecutor.shutdownNow();
      try {
        // A walk applies batches to the journal: let it see the interrupt before the journal
        // closes under it.
        loadExecutor.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (housekeeping != null) {
      housekeeping.shutdownNow();
    }
    LoadJobManager jobs = loadJobs;
    if (jobs != null) {
      jobs.close();
    }
    stopLeaderChecks();
    stopPersists();
    if (namespace != null) {
      namespace.close();
    }
    if (web != null) {
      web.close();
    }
    try {
      if (journal != null) {
        journal.close(checkpoint);
      }
    } finally {
      if (guards != null) {
        guards.close();
      }
      if (stores != null) {
        stores.close();
      }
      if (registry != null) {
        registry.close();
      }
      if (journalLock != null) {
        journalLock.close();
      }
    }
    LOG.info("Master stopped");
  }
}
