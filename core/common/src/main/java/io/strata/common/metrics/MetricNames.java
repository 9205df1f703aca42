package io.strata.common.metrics;

/**
 * Names of every metric Strata publishes. Micrometer names are dotted; the Prometheus registry
 * renders {@code strata.worker.cache.hits} (a counter) as {@code strata_worker_cache_hits_total}
 * and a byte counter with base unit "bytes" as {@code ..._bytes_total}. The scheme is {@code
 * strata.<process>.<area>.<name>}; tags carry tier, method and similar dimensions. docs/metrics.md
 * lists each with its meaning.
 */
public final class MetricNames {
  private MetricNames() {}

  // master
  public static final String MASTER_RPC_LATENCY = "strata.master.rpc.latency";
  public static final String MASTER_INODES = "strata.master.metastore.inodes";
  public static final String MASTER_INODE_CACHE_HITS = "strata.master.metastore.cache.hits";
  public static final String MASTER_INODE_CACHE_MISSES = "strata.master.metastore.cache.misses";
  public static final String MASTER_JOURNAL_ENTRIES = "strata.master.journal.entries";
  public static final String MASTER_JOURNAL_CHECKPOINTS = "strata.master.journal.checkpoints";
  public static final String MASTER_JOURNAL_ROLE = "strata.master.journal.leader";
  public static final String MASTER_JOURNAL_TERM = "strata.master.journal.term";
  public static final String MASTER_JOURNAL_APPLIED_INDEX = "strata.master.journal.applied.index";
  public static final String MASTER_JOURNAL_COMMIT_INDEX = "strata.master.journal.commit.index";
  public static final String MASTER_JOURNAL_LOG_BYTES = "strata.master.journal.log.bytes";
  public static final String MASTER_JOURNAL_SNAPSHOT_AGE =
      "strata.master.journal.snapshot.age.seconds";
  public static final String MASTER_JOURNAL_SNAPSHOT_BYTES = "strata.master.journal.snapshot.bytes";
  public static final String MASTER_JOURNAL_LEADER_CHANGES = "strata.master.journal.leader.changes";
  public static final String MASTER_JOURNAL_FAILOVERS = "strata.master.journal.failovers";

  /** Changes (calls) carried by each replicated journal entry: the group commit's reach. */
  public static final String MASTER_JOURNAL_BATCH_CHANGES = "strata.master.journal.batch.changes";

  /** Changes handed to the journal and not yet sent in an entry. */
  public static final String MASTER_JOURNAL_QUEUED = "strata.master.journal.queued.changes";

  /** Journal entries sent and not yet committed and applied. */
  public static final String MASTER_JOURNAL_IN_FLIGHT = "strata.master.journal.inflight.entries";

  /** Under-store calls of the master by mount and outcome (ok, error, timeout, refused). */
  public static final String MASTER_UFS_CALLS = "strata.master.ufs.calls";

  /** 1 while a mount's store is taken as not answering and its calls fail at once. */
  public static final String MASTER_UFS_UNAVAILABLE = "strata.master.ufs.unavailable";

  /** Master calls waiting for a lock on a path another change holds. */
  public static final String MASTER_PATH_LOCK_WAITS = "strata.master.path.lock.waits";

  public static final String MASTER_WORKERS = "strata.master.workers";
  public static final String MASTER_UFS_METADATA_LOADS = "strata.master.ufs.metadata.loads";

  /** Under-store checks made because a path was due for a sync; tagged with {@link #TAG_KIND}. */
  public static final String MASTER_UFS_SYNC_CHECKS = "strata.master.ufs.sync.checks";

  /** Namespace changes a sync made; tagged with {@link #TAG_CHANGE}. */
  /** Gauge of load jobs that have not ended. */
  public static final String MASTER_LOAD_JOBS_ACTIVE = "strata.master.load.jobs.active";

  /** Counter of load-job blocks by outcome (tag {@link #TAG_OUTCOME}). */
  public static final String MASTER_LOAD_BLOCKS = "strata.master.load.blocks";

  /** Counter of files load jobs recorded as failed. */
  public static final String MASTER_LOAD_FILES_FAILED = "strata.master.load.files.failed";

  public static final String MASTER_UFS_SYNC_CHANGES = "strata.master.ufs.sync.changes";

  /** Counter of namespace changes published to watching clients (WatchChanges). */
  public static final String MASTER_WATCH_CHANGES = "strata.master.watch.changes";

  /** Counter of watchers told to reset their caches (missed or fell behind). */
  public static final String MASTER_WATCH_RESETS = "strata.master.watch.resets";

  /** Gauge of clients streaming the namespace's changes. */
  public static final String MASTER_WATCH_WATCHERS = "strata.master.watch.watchers";

  /**
   * Counter of the actions taken on files and directories whose time to live passed; tagged with
   * {@link #TAG_ACTION}.
   */
  public static final String MASTER_TTL_ACTIONS = "strata.master.ttl.actions";

  /**
   * Gauge of the free space of the fuller of the journal's and the metastore's file systems, in
   * bytes; changes are refused below {@code strata.master.journal.reserved.space}.
   */
  public static final String MASTER_JOURNAL_FREE = "strata.master.journal.free";

  /**
   * Counter of incomplete files the leader removed because their writer's lease lapsed (the writer
   * died or gave up).
   */
  public static final String MASTER_LEASES_RECOVERED = "strata.master.leases.recovered";

  /** Gauge of the files waiting for the persist scheduler (ASYNC_THROUGH, TO_BE_PERSISTED). */
  public static final String MASTER_PERSIST_BACKLOG_FILES = "strata.master.persist.backlog.files";

  /** Gauge of the bytes of the files waiting for the persist scheduler. */
  public static final String MASTER_PERSIST_BACKLOG_BYTES = "strata.master.persist.backlog";

  /** Gauge of how long the oldest file waiting for the persist scheduler has waited. */
  public static final String MASTER_PERSIST_BACKLOG_AGE = "strata.master.persist.backlog.age";

  /** Counter of the files the persist scheduler (or `strata fs persist`) wrote to their stores. */
  public static final String MASTER_PERSIST_FILES = "strata.master.persist.files";

  /** Counter of persist attempts that failed (each is tried again later). */
  public static final String MASTER_PERSIST_FAILURES = "strata.master.persist.failures";

  /** Tag of the sync checks: "status" (one path) or "listing" (a directory's children). */
  public static final String TAG_KIND = "kind";

  /** Tag of the sync changes: "added", "deleted" or "replaced". */
  public static final String TAG_CHANGE = "change";

  /** Tag of the time-to-live actions: "free" or "delete". */
  public static final String TAG_ACTION = "action";

  // worker
  public static final String WORKER_RPC_LATENCY = "strata.worker.rpc.latency";
  public static final String WORKER_CACHE_HITS = "strata.worker.cache.hits";
  public static final String WORKER_CACHE_MISSES = "strata.worker.cache.misses";
  public static final String WORKER_READ_CACHE_BYTES = "strata.worker.read.cache";
  public static final String WORKER_READ_UFS_BYTES = "strata.worker.read.ufs";

  /** Counter of under-store read calls made for client reads and the block copies they cause. */
  public static final String WORKER_READ_UFS_CALLS = "strata.worker.read.ufs.calls";

  public static final String WORKER_TIER_CAPACITY = "strata.worker.tier.capacity";
  public static final String WORKER_TIER_USED = "strata.worker.tier.used";
  public static final String WORKER_TIER_BLOCKS = "strata.worker.tier.blocks";
  public static final String WORKER_BLOCKS_EVICTED = "strata.worker.blocks.evicted";
  public static final String WORKER_BLOCKS_CACHED = "strata.worker.blocks.cached";

  /**
   * Counter of cached blocks found not to match their checksums (by a read or the scrubber) and
   * dropped, by tier.
   */
  public static final String WORKER_BLOCK_CORRUPTIONS = "strata.worker.block.corruptions";

  /** Counter of bytes of cached blocks the scrubber verified. */
  public static final String WORKER_SCRUBBED_BYTES = "strata.worker.scrub.verified";

  /**
   * Gauge of the bytes of held blocks, written to the cache only and not yet persisted, which are
   * never evicted; tagged with {@link #TAG_TIER}.
   */
  public static final String WORKER_BLOCKS_HELD_BYTES = "strata.worker.blocks.held";

  public static final String WORKER_WRITE_UFS_BYTES = "strata.worker.write.ufs";

  /** Counter of load tasks by outcome (tag {@link #TAG_OUTCOME}). */
  public static final String WORKER_LOAD_BLOCKS = "strata.worker.load.blocks";

  /** Counter of bytes read from under stores by load tasks. */
  public static final String WORKER_LOAD_BYTES = "strata.worker.load.bytes";

  /** Gauge of load tasks queued or running. */
  public static final String WORKER_LOAD_PENDING = "strata.worker.load.pending";

  // client
  public static final String CLIENT_READ_SHORT_CIRCUIT_BYTES = "strata.client.read.short.circuit";
  public static final String CLIENT_READ_REMOTE_BYTES = "strata.client.read.remote";
  public static final String CLIENT_READ_UFS_BYTES = "strata.client.read.ufs";
  public static final String CLIENT_READ_RETRIES = "strata.client.read.retries";
  public static final String CLIENT_WRITE_BYTES = "strata.client.write";
  public static final String CLIENT_WRITE_CACHED_BYTES = "strata.client.write.cached";
  public static final String CLIENT_WRITE_CACHE_FAILURES = "strata.client.write.cache.failures";

  // fuse (integration/fuse: the mount process's read path)
  /** Counter of page lookups of reads served by the mount's page cache. */
  public static final String FUSE_PAGE_CACHE_HITS = "strata.fuse.page.cache.hits";

  /** Counter of page lookups of reads the page cache could not serve. */
  public static final String FUSE_PAGE_CACHE_MISSES = "strata.fuse.page.cache.misses";

  /** Gauge of bytes held by the page cache (base unit bytes). */
  public static final String FUSE_PAGE_CACHE_USED = "strata.fuse.page.cache.used";

  /** Counter of bytes returned to read calls (base unit bytes). */
  public static final String FUSE_READ_BYTES = "strata.fuse.read";

  /** Counter of bytes fetched from workers or under stores, read-ahead included (bytes). */
  public static final String FUSE_READ_SOURCE_BYTES = "strata.fuse.read.source";

  /**
   * Counter of bytes read straight from block files of workers on the mount's machine, past the
   * page cache (base unit bytes); part of the source bytes.
   */
  public static final String FUSE_READ_LOCAL_BYTES = "strata.fuse.read.local";

  /** Counter of bytes fetched by read-ahead (base unit bytes); part of the source bytes. */
  public static final String FUSE_READ_AHEAD_BYTES = "strata.fuse.readahead";

  /** Counter of read-ahead fetches skipped because the read-ahead queue was full. */
  public static final String FUSE_READ_AHEAD_SKIPPED = "strata.fuse.readahead.skipped";

  /**
   * Timer of the time the mount's own code spends on one FUSE upcall, from its entry into Java to
   * its answer, tagged {@link #TAG_OPERATION}; a syscall's latency minus this is the cost of the
   * kernel, libfuse and the binding.
   */
  public static final String FUSE_UPCALL = "strata.fuse.upcall";

  /** Counter of lookups, getattr and opens the mount answered from its metadata cache. */
  public static final String FUSE_METADATA_HITS = "strata.fuse.metadata.cache.hits";

  /** Counter of statuses the mount asked the master for one path at a time. */
  public static final String FUSE_METADATA_LOADS = "strata.fuse.metadata.loads";

  /** Counter of folder listings put into the mount's metadata cache. */
  public static final String FUSE_METADATA_LISTINGS = "strata.fuse.metadata.listings";

  /** Counter of change notices the mount received from the master. */
  public static final String FUSE_METADATA_CHANGES = "strata.fuse.metadata.changes";

  /** Gauge: 1 while the master's change stream is in step with the mount, else 0. */
  public static final String FUSE_METADATA_WATCH = "strata.fuse.metadata.watch.connected";

  /** Counter of names and nodes the mount dropped from the kernel's caches. */
  public static final String FUSE_KERNEL_INVALIDATIONS = "strata.fuse.kernel.invalidations";

  /** Bytes held by the mount's staged copies of files open for writing (gauge). */
  public static final String FUSE_STAGING_BYTES = "strata.fuse.staging.bytes";

  /** Files open for writing through the mount, each with a staged copy (gauge). */
  public static final String FUSE_STAGING_FILES = "strata.fuse.staging.files";

  /** Staged copies written through to the cluster (close or fsync), by outcome. */
  public static final String FUSE_WRITE_THROUGHS = "strata.fuse.write.throughs";

  // tags
  public static final String TAG_TIER = "tier";

  /** The FUSE operation of an upcall: read, write, getattr, open, create, readdir, release. */
  public static final String TAG_OPERATION = "operation";

  public static final String TAG_METHOD = "method";
  public static final String TAG_STATE = "state";
  public static final String TAG_OUTCOME = "outcome";

  /** A mount point of the namespace, such as /s3. */
  public static final String TAG_MOUNT = "mount";

  // buffer pool (io.strata.common.buffer.AlignedBufferPool): each meter is <prefix>.<name>,
  // the prefix naming the process that owns the pool
  /** Prefix of the worker's buffer pool meters. */
  public static final String WORKER_BUFFER_POOL = "strata.worker.buffer.pool";

  /** Gauge: bytes of idle buffers kept for reuse. */
  public static final String BUFFER_POOL_POOLED = "pooled";

  /** Gauge: bytes of buffers acquired and not yet released. */
  public static final String BUFFER_POOL_IN_USE = "in.use";

  /** Gauge: the most bytes of buffers ever in use at once, since the pool was created. */
  public static final String BUFFER_POOL_IN_USE_PEAK = "in.use.peak";

  /** Counter: requests served by an idle buffer. */
  public static final String BUFFER_POOL_HITS = "hits";

  /** Counter: requests no idle buffer could serve. */
  public static final String BUFFER_POOL_MISSES = "misses";

  /** Counter: new direct buffers allocated. */
  public static final String BUFFER_POOL_ALLOCATIONS = "allocations";

  /** Counter: direct buffers freed back to the system. */
  public static final String BUFFER_POOL_RELEASES = "releases";

  // proxy
  /** Timer of S3 requests by operation (tag {@link #TAG_OPERATION}): count and latency. */
  public static final String PROXY_REQUESTS = "strata.proxy.requests";

  /** Counter of S3 error answers by operation and S3 error code (tag {@link #TAG_CODE}). */
  public static final String PROXY_ERRORS = "strata.proxy.errors";

  /** Counter of request body bytes received, by operation. */
  public static final String PROXY_BYTES_IN = "strata.proxy.received";

  /** Counter of response body bytes sent, by operation. */
  public static final String PROXY_BYTES_OUT = "strata.proxy.sent";

  /** Gauge of requests being served or waiting for a handler thread. */
  public static final String PROXY_REQUESTS_ACTIVE = "strata.proxy.requests.active";

  /** Counter of abandoned multipart uploads removed. */
  public static final String PROXY_MULTIPART_EXPIRED = "strata.proxy.multipart.expired";

  /**
   * Counter of what lifecycle sweeps did besides setting times to live, by action (tag {@link
   * #TAG_ACTION}: expire-current, remove-delete-marker, remove-folder).
   */
  public static final String PROXY_LIFECYCLE_ACTIONS = "strata.proxy.lifecycle.actions";

  /** Tag of the proxy's error counter: the S3 error code (NoSuchKey, ...). */
  public static final String TAG_CODE = "code";
}
