package io.strata.worker;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.strata.client.master.MasterAddresses;
import io.strata.common.DaemonThreads;
import io.strata.common.buffer.AlignedBufferPool;
import io.strata.common.buffer.BufferPoolSettings;
import io.strata.common.conf.StrataConfig;
import io.strata.common.conf.WorkerKeys;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.WorkerAddress;
import io.strata.server.common.ProcessMain;
import io.strata.server.common.ProcessMetricsRegistry;
import io.strata.server.common.RpcCalls;
import io.strata.server.common.WebServer;
import io.strata.underfs.UnderStores;
import io.strata.worker.block.BlockFileOpener;
import io.strata.worker.block.BlockScrubber;
import io.strata.worker.block.TierSpec;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.data.BlockCacher;
import io.strata.worker.data.DataServer;
import io.strata.worker.data.ReadMetrics;
import io.strata.worker.grpc.WorkerRpcService;
import io.strata.worker.load.LoadExecutor;
import io.strata.worker.load.LoadSettings;
import io.strata.worker.master.MasterLink;
import io.strata.worker.master.MountOptions;
import io.strata.worker.master.WorkerMasterClient;
import io.strata.worker.ufs.MountedStores;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A whole worker in one object: the tiered block store, the data channel, the gRPC service (with
 * the executor of load tasks and its buffer pool), the HTTP endpoint and the link to the master.
 * {@link #start} opens the store and binds every port before it returns (ports configured as 0 are
 * picked by the system, and the actual ones are what the master is told); registration with the
 * master continues in the background, so a worker whose master is down still serves what it holds.
 * Tests run it in-JVM.
 */
public final class WorkerServer implements ProcessMain.Server {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerServer.class);

  /** Under-store read tasks that may wait for a thread; beyond this, misses are refused. */
  private static final int UFS_READ_QUEUE = 4096;

  private final StrataConfig conf;
  private final PrometheusMeterRegistry registry = ProcessMetricsRegistry.create();
  private final TieredBlockStore store;
  // Made once every port is bound; read by the heartbeat's counters.
  private volatile BlockScrubber scrubber;
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private MasterLink masterLink;
  private DataServer dataServer;
  private Server rpcServer;
  private WebServer webServer;
  private ReadMetrics readMetrics;

  /**
   * @throws IllegalArgumentException when the tier configuration turns every tier off
   */
  public WorkerServer(StrataConfig conf) {
    this.conf = conf;
    this.store = new TieredBlockStore(TierSpec.fromConfig(conf), registry);
  }

  @Override
  public synchronized void start() throws Exception {
    try {
      startAll();
    } catch (Exception | Error e) {
      close();
      throw e;
    }
  }

  /**
   * Opens the tiers, starts the pieces that serve blocks (the data channel, the loads, the gRPC and
   * HTTP services) with every port bound, and then starts the registration with the master. Each
   * piece is added to {@link #toClose} as soon as it exists, so a failure stops what started.
   */
  private void startAll() throws Exception {
    store.open();
    store.verifyBlocks(conf.getBoolean(WorkerKeys.VERIFY_BLOCKS));
    String bindHost = conf.getString(WorkerKeys.BIND_HOST);
    WorkerMasterClient master =
        new WorkerMasterClient(
            MasterAddresses.of(conf), conf.getDuration(WorkerKeys.MASTER_RPC_TIMEOUT));
    toClose.add(master);
    MountedStores mountedStores = new MountedStores(new UnderStores(), new MountOptions(master));
    toClose.add(mountedStores);
    int chunkSize =
        (int) Math.min(64L << 20, Math.max(4096, conf.getBytes(WorkerKeys.UFS_READ_CHUNK_SIZE)));

    // One opener for every writer of block files, so each tier folder is probed and logged once.
    BlockFileOpener opener = new BlockFileOpener(conf.getBoolean(WorkerKeys.BLOCK_WRITE_DIRECT));
    BlockCacher cacher = startBlockCacher(mountedStores, chunkSize, opener);
    LoadExecutor loads = startLoadExecutor(mountedStores, opener);
    startDataServer(bindHost, chunkSize, mountedStores, cacher);

    // Made before the gRPC service, which tells the master of held blocks through it; started
    // once every port is bound, since registration reports them.
    linkToMaster(master);
    startRpcServer(bindHost, mountedStores, loads);
    webServer = new WebServer(bindHost, conf.getInt(WorkerKeys.WEB_PORT), registry);
    toClose.add(webServer);

    masterLink.start();
    long scrubRate = conf.getBytes(WorkerKeys.SCRUB_RATE);
    if (scrubRate < 0) {
      throw new IllegalArgumentException(
          WorkerKeys.SCRUB_RATE.name()
              + " is negative: give bytes per second, or 0 to turn it off");
    }
    scrubber = new BlockScrubber(store, scrubRate, registry);
    toClose.add(scrubber);
    scrubber.start();
    LOG.info(
        "Worker {} serving: rpc port {}, data port {}, web port {}; {}",
        conf.getString(WorkerKeys.HOSTNAME),
        rpcPort(),
        dataPort(),
        webPort(),
        master.masters());
  }

  /** Starts the cacher of blocks read from under stores on a miss; closed with the worker. */
  private BlockCacher startBlockCacher(
      MountedStores mountedStores, int chunkSize, BlockFileOpener opener) {
    BlockCacher cacher =
        new BlockCacher(
            store,
            mountedStores,
            positive(WorkerKeys.UFS_FETCH_THREADS),
            conf.getInt(WorkerKeys.CACHE_ON_READ_MISS_QUEUE),
            chunkSize,
            opener);
    toClose.add(cacher);
    return cacher;
  }

  /** Starts the executor of load tasks with its buffer pool; both closed with the worker. */
  private LoadExecutor startLoadExecutor(MountedStores mountedStores, BlockFileOpener opener) {
    AlignedBufferPool bufferPool =
        new AlignedBufferPool(
            BufferPoolSettings.fromWorker(conf), registry, MetricNames.WORKER_BUFFER_POOL);
    toClose.add(bufferPool);
    // Added after the pool, so closed before it: loads hand their buffers back first.
    LoadExecutor loads =
        new LoadExecutor(
            store, mountedStores, opener, bufferPool, LoadSettings.fromWorker(conf), registry);
    toClose.add(loads);
    return loads;
  }

  /**
   * Starts the data channel on its port, with the bounded pool of under-store reads it answers
   * misses with; both are closed with the worker.
   */
  private void startDataServer(
      String bindHost, int chunkSize, MountedStores mountedStores, BlockCacher cacher)
      throws InterruptedException {
    ThreadPoolExecutor ufsExecutor = startUfsReadPool();
    readMetrics = new ReadMetrics(registry);
    dataServer =
        new DataServer(
            new DataServer.Settings(
                bindHost,
                conf.getInt(WorkerKeys.DATA_PORT),
                conf.getInt(WorkerKeys.DATA_THREADS),
                chunkSize,
                conf.getBoolean(WorkerKeys.CACHE_ON_READ_MISS),
                conf.getBytes(WorkerKeys.READ_MISS_WHOLE_BLOCK_SIZE)),
            store,
            mountedStores,
            ufsExecutor,
            cacher,
            readMetrics);
    dataServer.start();
    toClose.add(dataServer);
  }

  /**
   * The threads that read under stores for the data channel, at most {@link #UFS_READ_QUEUE} tasks
   * waiting; shut down with the worker.
   */
  private ThreadPoolExecutor startUfsReadPool() {
    int ufsThreads = positive(WorkerKeys.UFS_READ_THREADS);
    ThreadPoolExecutor ufsExecutor =
        new ThreadPoolExecutor(
            ufsThreads,
            ufsThreads,
            60,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(UFS_READ_QUEUE),
            DaemonThreads.numbered("ufs-read-"));
    ufsExecutor.allowCoreThreadTimeOut(true);
    toClose.add(
        () -> {
          ufsExecutor.shutdownNow();
          ufsExecutor.awaitTermination(10, TimeUnit.SECONDS);
        });
    return ufsExecutor;
  }

  /**
   * Makes the link to the master (not started yet) and has the block store report changes of held
   * blocks to it; closed with the worker.
   */
  private void linkToMaster(WorkerMasterClient master) {
    masterLink =
        new MasterLink(
            master,
            store,
            this::address,
            () ->
                readMetrics.snapshot(store.evictedBlocks()).toBuilder()
                    .setBlocksCorrupt(store.corruptBlocks())
                    .setBytesScrubbed(scrubber == null ? 0 : scrubber.verifiedBytes())
                    .build(),
            conf.getDuration(WorkerKeys.HEARTBEAT_INTERVAL),
            conf.getDuration(WorkerKeys.REGISTER_RETRY_MAX_INTERVAL));
    toClose.add(masterLink);
    store.setListener(masterLink);
  }

  /** Starts the gRPC service on its port; shut down with the worker. */
  private void startRpcServer(String bindHost, MountedStores mountedStores, LoadExecutor loads)
      throws IOException {
    Counter writeBytes =
        Counter.builder(MetricNames.WORKER_WRITE_UFS_BYTES)
            .baseUnit("bytes")
            .description("Bytes written through to under stores")
            .register(registry);
    rpcServer =
        NettyServerBuilder.forAddress(
                new InetSocketAddress(bindHost, conf.getInt(WorkerKeys.RPC_PORT)))
            .addService(
                new WorkerRpcService(
                    store,
                    mountedStores,
                    loads,
                    masterLink,
                    new RpcCalls(registry, MetricNames.WORKER_RPC_LATENCY),
                    writeBytes,
                    readMetrics))
            .intercept(new io.strata.server.common.VersionCheck("worker", null))
            .build()
            .start();
    Server grpc = rpcServer;
    toClose.add(
        () -> {
          grpc.shutdownNow();
          grpc.awaitTermination(10, TimeUnit.SECONDS);
        });
  }

  private int positive(io.strata.common.conf.ConfigKey key) {
    int v = conf.getInt(key);
    if (v <= 0) {
      throw new IllegalArgumentException(
          "Configuration key " + key.name() + " must be at least " + "1, got " + v);
    }
    return v;
  }

  /** The address registered with the master: the configured host name and the bound ports. */
  public WorkerAddress address() {
    return WorkerAddress.newBuilder()
        .setHost(conf.getString(WorkerKeys.HOSTNAME))
        .setRpcPort(rpcPort())
        .setDataPort(dataPort())
        .setWebPort(webPort())
        .build();
  }

  /** The bound gRPC port. */
  public int rpcPort() {
    return rpcServer.getPort();
  }

  /** The bound data-channel port. */
  public int dataPort() {
    return dataServer.port();
  }

  /** The bound HTTP port. */
  public int webPort() {
    return webServer.port();
  }

  public TieredBlockStore blockStore() {
    return store;
  }

  public PrometheusMeterRegistry meterRegistry() {
    return registry;
  }

  /** The link to the master; null before {@link #start}. */
  public MasterLink masterLink() {
    return masterLink;
  }

  /**
   * Drains before a stop: tells the master that this worker is stopping, so that clients learn to
   * read elsewhere, then waits until no read is being answered and none has come for a second, and
   * at least the clients' worker-list TTL has passed; at most {@code strata.worker.drain.timeout}.
   * Reads that still come afterwards fail over to other workers or the under store when the worker
   * is gone.
   */
  @Override
  public void drain() throws InterruptedException {
    Duration timeout = conf.getDuration(WorkerKeys.DRAIN_TIMEOUT);
    if (timeout.isZero() || masterLink == null || dataServer == null) {
      return;
    }
    long start = System.nanoTime();
    masterLink.drain(timeout);
    Duration left = timeout.minusNanos(System.nanoTime() - start);
    boolean idle =
        !left.isNegative()
            && dataServer.awaitIdle(
                conf.getDuration(io.strata.common.conf.ClientKeys.WORKER_LIST_TTL),
                Duration.ofSeconds(1),
                left);
    LOG.info(
        "Drained in {} ms{}",
        (System.nanoTime() - start) / 1_000_000,
        idle ? "" : " (reads were still being served at strata.worker.drain.timeout)");
  }

  @Override
  public synchronized void close() {
    // Stop taking work first (master link, servers), then the pools and stores they use.
    for (int i = toClose.size() - 1; i >= 0; i--) {
      try {
        toClose.get(i).close();
      } catch (Exception e) {
        LOG.warn("Error while stopping the worker: {}", e.toString());
      }
    }
    toClose.clear();
    store.close();
    registry.close();
  }
}
