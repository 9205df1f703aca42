package io.strata.client;

import io.grpc.ManagedChannel;
import io.strata.client.data.DataClient;
import io.strata.client.master.ChannelEventLoops;
import io.strata.client.master.MasterClient;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.rpc.VersionHeaders;
import io.strata.proto.WorkerAddress;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the streams of one {@link FileSystem} share: configuration, the master connection, the data
 * channel pools, the live-worker list and their tier folders on this machine, the under-store
 * reader, gRPC channels to workers (for writes) and the metrics. Closed with its file system.
 */
final class ClientContext implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClientContext.class);

  final StrataConfig conf;
  final MasterClient master;
  final DataClient data;
  final LiveWorkers workers;
  final LocalTiers localTiers;
  final LocalReadReports localReads;
  final UnderStoreReader underStore;
  final ClientMetrics metrics = new ClientMetrics();
  final MountResolver mountResolver;

  /** What a close of a written file waits for ({@code strata.user.file.write.type}). */
  final WriteType writeType;

  final FolderWriteTypes folderWriteTypes;
  final WrittenFileCacher writtenFiles;
  final LeaseRenewal leases;
  final WriteTargets writeTargets = new WriteTargets();

  /** Whether block bytes are checked against their checksums before they are handed on. */
  final boolean verifyBlocks;

  /**
   * Until when (System.nanoTime) new files are created in two master calls, because the master
   * answered that it does not know CommitNewFile (a release before it, during a rolling upgrade);
   * asked again after that.
   */
  private volatile long twoCallCreatesUntil = System.nanoTime();

  /** Until when (System.nanoTime) cache-only files are written through instead. */
  private volatile long writeThroughUntil = System.nanoTime();

  /**
   * Workers (host:rpcPort) that answered that they do not know WriteSmallFile (a release before
   * it), with until when (System.nanoTime) small files go to them as streams instead.
   */
  private final Map<String, Long> streamOnlyWorkers = new ConcurrentHashMap<>();

  private final Map<String, ManagedChannel> workerChannels = new ConcurrentHashMap<>();
  private final ChannelEventLoops workerLoops =
      new ChannelEventLoops("strata-client-worker", Runtime.getRuntime().availableProcessors());

  ClientContext(StrataConfig conf) {
    this.conf = conf;
    this.master = new MasterClient(conf);
    this.data = new DataClient(conf);
    this.workers = new LiveWorkers(master, conf.getDuration(ClientKeys.WORKER_LIST_TTL));
    this.verifyBlocks = conf.getBoolean(ClientKeys.VERIFY_BLOCKS);
    this.localTiers = new LocalTiers(workers, verifyBlocks);
    this.localReads = new LocalReadReports(this::workerChannel);
    this.underStore = new UnderStoreReader(master);
    this.mountResolver = new MountResolver(master);
    this.writeType = WriteType.of(conf);
    this.folderWriteTypes = new FolderWriteTypes(this);
    this.writtenFiles = new WrittenFileCacher(this);
    this.leases = new LeaseRenewal(master, conf.getDuration(ClientKeys.LEASE_RENEW_INTERVAL));
  }

  /** The master does not know CommitNewFile: new files take two calls for a minute. */
  void commitNewFileUnsupported() {
    twoCallCreatesUntil = System.nanoTime() + 60_000_000_000L;
  }

  /**
   * The master refused a cache-only file (a cluster not finalized at the layout that keeps them, or
   * a master that does not keep them): such files are written through for a minute.
   */
  void cacheOnlyRefused() {
    writeThroughUntil = System.nanoTime() + 60_000_000_000L;
  }

  /** Whether files of write type ASYNC_THROUGH or MUST_CACHE may be kept in the cache only. */
  boolean cacheOnlyAccepted() {
    return System.nanoTime() - writeThroughUntil >= 0;
  }

  /** Whether new files may be committed in one master call (see {@link FileOutStream}). */
  boolean commitNewFileSupported() {
    return System.nanoTime() - twoCallCreatesUntil >= 0;
  }

  /** The worker does not know WriteSmallFile: small files go to it as streams for a minute. */
  void writeSmallFileUnsupported(WorkerAddress address) {
    streamOnlyWorkers.put(
        address.getHost() + ":" + address.getRpcPort(), System.nanoTime() + 60_000_000_000L);
  }

  /** Whether a small file may go to the worker in one WriteSmallFile call. */
  boolean writeSmallFileSupported(WorkerAddress address) {
    if (streamOnlyWorkers.isEmpty()) {
      return true;
    }
    Long until = streamOnlyWorkers.get(address.getHost() + ":" + address.getRpcPort());
    return until == null || System.nanoTime() - until >= 0;
  }

  /** The gRPC channel to a worker's WorkerService, opened on first use and then shared. */
  ManagedChannel workerChannel(WorkerAddress address) {
    String target = address.getHost() + ":" + address.getRpcPort();
    return workerChannels.computeIfAbsent(
        target,
        t ->
            workerLoops
                .forAddress(address.getHost(), address.getRpcPort())
                .usePlaintext()
                .intercept(VersionHeaders.clientInterceptor())
                .build());
  }

  @Override
  public void close() {
    leases.close();
    localReads.close();
    for (ManagedChannel ch : workerChannels.values()) {
      ch.shutdownNow();
    }
    for (ManagedChannel ch : workerChannels.values()) {
      try {
        ch.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    workerChannels.clear();
    workerLoops.close();
    data.close();
    master.close();
    try {
      underStore.close();
    } catch (IOException e) {
      LOG.warn("Error closing under stores: {}", e.toString());
    }
  }
}
