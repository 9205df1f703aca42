package io.strata.common.conf;

/** Keys read by the worker process. */
public final class WorkerKeys {
  private WorkerKeys() {}

  public static final ConfigKey HOSTNAME =
      ConfigKey.string(
          "strata.worker.hostname",
          "127.0.0.1",
          "Host name or address that clients use to reach this worker.");
  public static final ConfigKey BIND_HOST =
      ConfigKey.string(
          "strata.worker.bind.host", "127.0.0.1", "Address the worker's servers listen on.");
  public static final ConfigKey RPC_PORT =
      ConfigKey.integer(
          "strata.worker.rpc.port",
          19300,
          "port",
          "TCP port of the worker's gRPC service (writes).");
  public static final ConfigKey DATA_PORT =
      ConfigKey.integer(
          "strata.worker.data.port",
          19301,
          "port",
          "TCP port of the worker's data channel (block reads).");
  public static final ConfigKey WEB_PORT =
      ConfigKey.integer(
          "strata.worker.web.port",
          19302,
          "port",
          "TCP port of the worker's HTTP endpoint (/metrics, /health).");
  public static final ConfigKey MEM_DIR =
      ConfigKey.string(
          "strata.worker.tier.mem.dir",
          "/dev/shm/strata-${user.name}/worker",
          "Folder of the memory tier (a tmpfs).");
  public static final ConfigKey MEM_CAPACITY =
      ConfigKey.bytes(
          "strata.worker.tier.mem.capacity",
          "1GB",
          "Capacity of the memory tier; 0 turns the tier off.");
  public static final ConfigKey SSD_DIR =
      ConfigKey.string(
          "strata.worker.tier.ssd.dir", "${strata.home}/worker/ssd", "Folder of the SSD tier.");
  public static final ConfigKey SSD_CAPACITY =
      ConfigKey.bytes(
          "strata.worker.tier.ssd.capacity",
          "10GB",
          "Capacity of the SSD tier; 0 turns the tier off.");
  public static final ConfigKey HDD_DIR =
      ConfigKey.string(
          "strata.worker.tier.hdd.dir", "${strata.home}/worker/hdd", "Folder of the HDD tier.");
  public static final ConfigKey HDD_CAPACITY =
      ConfigKey.bytes(
          "strata.worker.tier.hdd.capacity",
          "0",
          "Capacity of the HDD tier; 0 (the default) turns the tier off.");
  public static final ConfigKey CACHE_ON_READ_MISS =
      ConfigKey.bool(
          "strata.worker.read.miss.cache.enabled",
          true,
          "Cache the whole block after a read that missed the cache (the reader is answered from"
              + " the copy when it waits for it, see strata.worker.read.miss.whole.block.size).");
  public static final ConfigKey READ_MISS_WHOLE_BLOCK_SIZE =
      ConfigKey.bytes(
          "strata.worker.read.miss.whole.block.size",
          "4MB",
          "A read that misses a block of at most this size is served by copying the whole block"
              + " into the cache and answering from the copy, so a small file costs one under-store"
              + " read; a larger block is copied that way only when the read starts at its first"
              + " byte, and a read elsewhere in it fetches its own range.");
  public static final ConfigKey UFS_FETCH_THREADS =
      ConfigKey.integer(
          "strata.worker.read.miss.cache.threads",
          16,
          "threads",
          "Threads that copy missed blocks from under stores into the cache, and so serve the first"
              + " reads of small files and of blocks' starts (as many as"
              + " strata.worker.read.ufs.threads); each holds two chunks while it copies.");
  public static final ConfigKey HEARTBEAT_INTERVAL =
      ConfigKey.duration(
          "strata.worker.heartbeat.interval", "1s", "Time between heartbeats to the master.");
  public static final ConfigKey DATA_THREADS =
      ConfigKey.integer(
          "strata.worker.data.threads",
          0,
          "threads",
          "Netty event-loop threads of the data channel; 0 means twice the cores.");
  public static final ConfigKey UFS_READ_THREADS =
      ConfigKey.integer(
          "strata.worker.read.ufs.threads",
          16,
          "threads",
          "Threads that read missed ranges from under stores for the data channel.");
  public static final ConfigKey UFS_READ_CHUNK_SIZE =
      ConfigKey.bytes(
          "strata.worker.read.ufs.chunk.size",
          "1MB",
          "Size of the chunks in which a missed range is read from the under store and sent.");
  public static final ConfigKey CACHE_ON_READ_MISS_QUEUE =
      ConfigKey.integer(
          "strata.worker.read.miss.cache.queue",
          256,
          "blocks",
          "Block copies that may wait for a copy thread; further copy requests are dropped.");
  public static final ConfigKey MASTER_RPC_TIMEOUT =
      ConfigKey.duration(
          "strata.worker.master.rpc.timeout",
          "10s",
          "Deadline of each call the worker makes to the master.");
  public static final ConfigKey REGISTER_RETRY_MAX_INTERVAL =
      ConfigKey.duration(
          "strata.worker.register.retry.max.interval",
          "5s",
          "Longest wait between attempts to register with a master that cannot be reached.");
  public static final ConfigKey BUFFER_POOL_BUDGET =
      ConfigKey.bytes(
          "strata.worker.buffer.pool.budget",
          "256MB",
          "Direct memory the worker's aligned buffer pool holds at most, idle and in use together, "
              + "before it frees idle buffers.");
  public static final ConfigKey BUFFER_POOL_MAX_OVERSIZE =
      ConfigKey.integer(
          "strata.worker.buffer.pool.max.oversize",
          4,
          "times",
          "How many times larger than a request a pooled idle buffer may be and still serve it.");
  public static final ConfigKey BLOCK_WRITE_DIRECT =
      ConfigKey.bool(
          "strata.worker.block.write.direct",
          true,
          "Write block files with Direct I/O (O_DIRECT) so that caching blocks does not fill the page "
              + "cache; tiers whose file system refuses it are written through the page cache anyway.");
  public static final ConfigKey DRAIN_TIMEOUT =
      ConfigKey.duration(
          "strata.worker.drain.timeout",
          "10s",
          "Longest a worker told to stop (SIGTERM) drains first: it tells the master, which stops"
              + " naming it as a source of new reads, and waits until no read is being served and"
              + " none came for a second (and at least strata.client.worker.list.ttl). 0 stops at"
              + " once.");
  public static final ConfigKey VERIFY_BLOCKS =
      ConfigKey.bool(
          "strata.worker.block.verify",
          true,
          "Verify the chunks of a cached block that a read touches against the block's checksums"
              + " before sending them, and drop a block that does not match; off only to measure"
              + " what verifying costs.");
  public static final ConfigKey SCRUB_RATE =
      ConfigKey.bytes(
          "strata.worker.scrub.rate",
          "4MB",
          "Bytes per second at most that the scrubber reads to verify cached blocks against their"
              + " checksums in the background (it finds blocks that rotted at rest without being"
              + " read, and gives checksums to blocks cached before blocks had them); 0 turns it"
              + " off.");
  public static final ConfigKey LOAD_THREADS =
      ConfigKey.integer(
          "strata.worker.load.threads",
          16,
          "threads",
          "Threads that read blocks of load jobs from under stores and cache them; "
              + "with the chunk size this bounds the direct memory loads use.");
  public static final ConfigKey LOAD_CHUNK_SIZE =
      ConfigKey.bytes(
          "strata.worker.load.chunk.size",
          "4MB",
          "Bytes a load thread reads from the under store and writes to the block file per step "
              + "(rounded up to 4 KiB); each load thread holds one such buffer while it works.");
  public static final ConfigKey LOAD_QUEUE_SIZE =
      ConfigKey.integer(
          "strata.worker.load.queue.size",
          1024,
          "blocks",
          "Load tasks that may wait for a load thread; beyond this the worker answers busy and the "
              + "master sends them again later.");
}
