package io.strata.common.conf;

/** Keys read by clients (the Java API, the command line, and later FUSE and the proxy). */
public final class ClientKeys {
  private ClientKeys() {}

  public static final ConfigKey MASTER_RETRY_DURATION =
      ConfigKey.duration(
          "strata.client.master.retry.max.duration",
          "10s",
          "How long a client keeps retrying an unreachable master before it gives up.");
  public static final ConfigKey WRITE_RETRY_DURATION =
      ConfigKey.duration(
          "strata.client.write.retry.duration",
          "60s",
          "How long a write whose writer still holds its bytes (the FUSE mount's staged copy of a"
              + " file it closes) is made again while it fails because its worker is away"
              + " (restarting, or dead and not yet dropped by the master), each time on another"
              + " live worker when there is one. Past it, the write fails (EIO through the mount).");
  public static final ConfigKey LEASE_RENEW_INTERVAL =
      ConfigKey.duration(
          "strata.client.lease.renew.interval",
          "30s",
          "How often a client renews its leases on the incomplete files it is writing; keep it"
              + " well below the masters' strata.master.lease.timeout.");
  public static final ConfigKey MASTER_FAILOVER_TIMEOUT =
      ConfigKey.duration(
          "strata.client.master.failover.timeout",
          "30s",
          "How long a call keeps looking for the leading master among strata.master.addresses "
              + "(following redirects and retrying failed calls) before it gives up.");
  public static final ConfigKey MASTER_RETRY_BASE_SLEEP =
      ConfigKey.duration(
          "strata.client.master.retry.base.sleep",
          "50ms",
          "First back-off between retries of a master call; it doubles up to the maximum.");
  public static final ConfigKey MASTER_RETRY_MAX_SLEEP =
      ConfigKey.duration(
          "strata.client.master.retry.max.sleep",
          "2s",
          "Longest back-off between retries of a master call; at most 250ms when "
              + "strata.master.addresses names several masters, which replace a lost leader fast.");
  public static final ConfigKey RPC_TIMEOUT =
      ConfigKey.duration("strata.client.rpc.timeout", "60s", "Deadline of one control RPC.");
  public static final ConfigKey CONCAT_TIMEOUT =
      ConfigKey.duration(
          "strata.client.concat.timeout",
          "30min",
          "Deadline of one concatenation of files by a"
              + " worker, which copies every byte where the under store cannot join files in place.");
  public static final ConfigKey LIST_TIMEOUT =
      ConfigKey.duration(
          "strata.client.list.timeout",
          "30min",
          "Deadline of one streamed listing or metadata load; the first listing of a large"
              + " under-store directory loads it whole before its first page.");
  public static final ConfigKey SHORT_CIRCUIT =
      ConfigKey.bool(
          "strata.client.short.circuit.enabled",
          true,
          "Read blocks cached by a worker on this host straight from its block files.");
  public static final ConfigKey VERIFY_BLOCKS =
      ConfigKey.bool(
          "strata.client.block.verify",
          true,
          "Verify each chunk of a block file read on this host (short-circuit) against the"
              + " checksums its worker keeps beside it, and the bytes a worker sends against the"
              + " checksums it sends with them, before the bytes are handed on; off only to"
              + " measure what verifying costs.");
  public static final ConfigKey READ_AHEAD_MAX =
      ConfigKey.bytes(
          "strata.client.read.ahead.max",
          "8MB",
          "Largest read-ahead of a stream whose reads are sequential; 0 turns it off.");
  public static final ConfigKey WORKER_LIST_TTL =
      ConfigKey.duration(
          "strata.client.worker.list.ttl",
          "3s",
          "How long a client reuses the list of live workers before asking the master again.");
  public static final ConfigKey UFS_FALLBACK =
      ConfigKey.bool(
          "strata.client.read.ufs.fallback.enabled",
          true,
          "Read the under store directly when no worker can serve a block.");
  public static final ConfigKey WRITE_CHUNK_SIZE =
      ConfigKey.bytes(
          "strata.client.write.chunk.size",
          "1MB",
          "Bytes per message of a write stream; a file"
              + " smaller than this goes to the worker whole in one message (WriteSmallFile).");
  public static final ConfigKey WRITE_TYPE =
      ConfigKey.string(
          "strata.user.file.write.type",
          "CACHE_THROUGH",
          "What a close of a written file waits for: CACHE_THROUGH, the bytes in"
              + " the under store and cached on the workers that reads of the file go to; THROUGH,"
              + " the bytes in the under store only (cached at their first read); ASYNC_THROUGH,"
              + " the bytes held in one worker's cache, which the master writes to the under store"
              + " later; MUST_CACHE, the bytes held in one worker's cache only, never in the under"
              + " store. The last two apply to new files written at once (the FUSE mount's, small"
              + " S3 PUTs of new keys); a file's new content is written through. A folder's write"
              + " type (`strata fs setWriteType`) wins.");
  public static final ConfigKey DATA_CONNECT_TIMEOUT =
      ConfigKey.duration(
          "strata.client.data.connect.timeout",
          "5s",
          "Timeout to connect to a worker's data port.");
  public static final ConfigKey DATA_READ_TIMEOUT =
      ConfigKey.duration(
          "strata.client.data.read.timeout",
          "30s",
          "Time a block read may wait for the worker's next bytes before it tries elsewhere.");
  public static final ConfigKey DATA_POOL_MAX_IDLE =
      ConfigKey.integer(
          "strata.client.data.pool.max.idle",
          16,
          "connections",
          "Idle data connections a client keeps open to each worker; extra ones close after use.");
  public static final ConfigKey DATA_THREADS =
      ConfigKey.integer(
          "strata.client.data.threads",
          0,
          "threads",
          "Netty event-loop threads of the client's data channel; 0 means one per core.");
  public static final ConfigKey LOCAL_START_TIMEOUT =
      ConfigKey.duration(
          "strata.client.local.start.timeout",
          "60s",
          "How long `strata local up` waits for the master to answer and the worker to be live.");
  public static final ConfigKey LOCAL_STOP_TIMEOUT =
      ConfigKey.duration(
          "strata.client.local.stop.timeout",
          "30s",
          "How long `strata local down` waits after SIGTERM before it kills a process.");
}
