package io.strata.common.conf;

/** Keys read by the master process. */
public final class MasterKeys {
  private MasterKeys() {}

  public static final ConfigKey BIND_HOST =
      ConfigKey.string(
          "strata.master.bind.host",
          "127.0.0.1",
          "Address the master's gRPC and web servers listen on.");
  public static final ConfigKey WEB_PORT =
      ConfigKey.integer(
          "strata.master.web.port",
          19201,
          "port",
          "TCP port of the master's HTTP endpoint (/metrics, /health).");
  public static final ConfigKey ROOT_UFS =
      ConfigKey.string(
          "strata.master.root.ufs",
          "file://${strata.home}/underfs",
          "Under-store URI mounted at the namespace root.");
  public static final ConfigKey ROOT_UFS_OPTIONS =
      ConfigKey.string(
          "strata.master.root.ufs.options",
          "",
          "Mount options of the root store as comma-separated key=value pairs, such as"
              + " s3.endpoint=http://127.0.0.1:9000,s3.path.style=true.");
  public static final ConfigKey METASTORE_DIR =
      ConfigKey.string(
          "strata.master.metastore.dir",
          "${strata.home}/master/metastore",
          "Folder of the RocksDB database that holds inodes.");
  public static final ConfigKey INODE_CACHE_SIZE =
      ConfigKey.integer(
          "strata.master.metastore.inode.cache.size",
          100_000,
          "inodes",
          "Inodes kept in the in-heap cache in front of RocksDB.");
  public static final ConfigKey JOURNAL_DIR =
      ConfigKey.string(
          "strata.master.journal.dir",
          "${strata.home}/master/journal",
          "Folder of the journal segments and checkpoints.");
  public static final ConfigKey JOURNAL_FSYNC =
      ConfigKey.bool(
          "strata.master.journal.fsync",
          false,
          "Force each journal write to the device (survives power loss, not only a crash).");
  public static final ConfigKey JOURNAL_SEGMENT_SIZE =
      ConfigKey.bytes(
          "strata.master.journal.segment.size",
          "64MB",
          "Size after which the journal starts a new segment file.");
  public static final ConfigKey JOURNAL_RESERVED_SPACE =
      ConfigKey.bytes(
          "strata.master.journal.reserved.space",
          "256MB",
          "Free space the file systems of strata.master.journal.dir and strata.master.metastore.dir"
              + " must keep: below it the leading master refuses changes (RESOURCE_EXHAUSTED,"
              + " ENOSPC through the mount, 503 from the S3 proxy) and keeps serving reads, and"
              + " takes changes again once there is room. 0 turns the check off.");
  public static final ConfigKey CHECKPOINT_PERIOD =
      ConfigKey.duration(
          "strata.master.journal.checkpoint.period",
          "10min",
          "Time between periodic checkpoints (0 turns periodic checkpoints off).");
  public static final ConfigKey CHECKPOINT_ENTRIES =
      ConfigKey.longKey(
          "strata.master.journal.checkpoint.entries",
          1_000_000,
          "entries",
          "Journal entries after which a checkpoint is taken.");
  public static final ConfigKey BLOCK_SIZE =
      ConfigKey.bytes(
          "strata.master.file.block.size",
          "64MB",
          "Block size of files created without one and of files loaded from under stores.");
  public static final ConfigKey WORKER_TIMEOUT =
      ConfigKey.duration(
          "strata.master.worker.timeout",
          "30s",
          "Time without a heartbeat after which a worker is marked lost.");
  public static final ConfigKey LIST_PAGE_SIZE =
      ConfigKey.integer(
          "strata.master.list.page.size", 1000, "entries", "Directory entries per streamed page.");
  public static final ConfigKey RPC_THREADS =
      ConfigKey.integer(
          "strata.master.rpc.threads", 32, "threads", "Threads that execute master RPCs.");
  public static final ConfigKey UFS_SYNC_INTERVAL =
      ConfigKey.string(
          "strata.master.ufs.sync.interval",
          "never",
          "How old the master's view of an under-store path may be before an access checks the "
              + "store again: never, always, or a duration such as 30s (a mount's sync.interval "
              + "option and a call's own interval take precedence).");
  public static final ConfigKey UFS_SYNC_TIME_CACHE_SIZE =
      ConfigKey.integer(
          "strata.master.ufs.sync.time.cache.size",
          500_000,
          "entries",
          "Check times of paths found unchanged, kept in memory instead of the journal; a path "
              + "that falls out is checked again on its next due access.");
  public static final ConfigKey METADATA_LOAD_THREADS =
      ConfigKey.integer(
          "strata.master.metadata.load.threads",
          4,
          "threads",
          "Metadata loads of whole trees (LoadMetadata) that run at once; more wait their turn.");
  public static final ConfigKey LOAD_WORKER_INFLIGHT_BLOCKS =
      ConfigKey.integer(
          "strata.master.load.worker.inflight.blocks",
          64,
          "blocks",
          "Blocks of load jobs sent to one worker and not yet answered, at most.");
  public static final ConfigKey LOAD_BATCH_SIZE =
      ConfigKey.integer(
          "strata.master.load.batch.size",
          16,
          "blocks",
          "Blocks sent to a worker in one LoadBlocks call, at most.");
  public static final ConfigKey LOAD_WINDOW_FILES =
      ConfigKey.integer(
          "strata.master.load.window.files",
          10_000,
          "files",
          "Files a load job may have listed and not yet finished; the walk pauses beyond this, so "
              + "a job's memory does not grow with the size of the tree.");
  public static final ConfigKey LOAD_RETRIES =
      ConfigKey.integer(
          "strata.master.load.retries",
          3,
          "attempts",
          "Times a block whose load failed is tried again before its file is "
              + "recorded as failed (a lost worker's blocks are sent elsewhere without counting).");
  public static final ConfigKey LOAD_RPC_TIMEOUT =
      ConfigKey.duration(
          "strata.master.load.rpc.timeout",
          "10min",
          "Deadline of one LoadBlocks call to a worker.");
  public static final ConfigKey LOAD_JOURNAL_INTERVAL =
      ConfigKey.duration(
          "strata.master.load.journal.interval",
          "1s",
          "Time between journal entries recording a running load job's progress; a restarted "
              + "master resumes the job from the last one.");
  public static final ConfigKey LOAD_LIST_PAGE_SIZE =
      ConfigKey.integer(
          "strata.master.load.list.page.size",
          1000,
          "entries",
          "Directory entries a load job reads from the namespace at a time.");
  public static final ConfigKey LOAD_RESUME_DELAY =
      ConfigKey.duration(
          "strata.master.load.resume.delay",
          "5s",
          "Time a starting master waits before resuming unfinished load jobs, so that the workers "
              + "have registered again and blocks go to the workers reads will ask.");
  public static final ConfigKey TTL_CHECK_INTERVAL =
      ConfigKey.duration(
          "strata.master.ttl.check.interval",
          "1min",
          "Time between the leading master's checks for files and directories whose time to live"
              + " has passed (`strata fs setTtl`), which it then frees or deletes; 0 turns the"
              + " checks off.");
  public static final ConfigKey LEASE_TIMEOUT =
      ConfigKey.duration(
          "strata.master.lease.timeout",
          "5min",
          "How long an incomplete file whose writer renews a lease on it (clients of this release"
              + " do, every strata.client.lease.renew.interval) stays without a renewal before the"
              + " leading master removes it: its writer died or gave up. A new leader gives every"
              + " such file this long again. 0 turns the removal off.");
  public static final ConfigKey PERSIST_INTERVAL =
      ConfigKey.duration(
          "strata.master.persist.interval",
          "1s",
          "Time between the leading master's rounds over the files written with write type"
              + " ASYNC_THROUGH that are not in their under store yet; each round starts the ones due"
              + " (a failed one is tried again after a backoff that doubles from 1 s up to 5 min).");
  public static final ConfigKey PERSIST_THREADS =
      ConfigKey.integer(
          "strata.master.persist.threads",
          2,
          "files",
          "Files the leading master persists at once (ASYNC_THROUGH): each is one worker writing the"
              + " file's blocks to its under store.");
  public static final ConfigKey PERSIST_TIMEOUT =
      ConfigKey.duration(
          "strata.master.persist.timeout",
          "10min",
          "How long the master waits for a worker to write one file to its under store when"
              + " persisting it; a persist that takes longer fails and is tried again.");
  public static final ConfigKey WATCH_HISTORY_SIZE =
      ConfigKey.integer(
          "strata.master.watch.history.size",
          100_000,
          "changes",
          "Namespace changes the master keeps so that a client whose change stream broke (a FUSE"
              + " mount reconnecting) is sent what it missed instead of dropping its whole cache.");
  public static final ConfigKey WATCH_QUEUE_SIZE =
      ConfigKey.integer(
          "strata.master.watch.queue.size",
          100_000,
          "changes",
          "Changes waiting to be sent to one watching client; a client further behind is told to"
              + " drop its cache (reset) and its backlog is freed, so slow clients cannot fill the"
              + " master's memory.");
  public static final ConfigKey JOURNAL_PORT =
      ConfigKey.integer(
          "strata.master.journal.port",
          19202,
          "port",
          "TCP port on which masters replicate the journal to each other (Raft).");
  public static final ConfigKey JOURNAL_ADDRESSES =
      ConfigKey.string(
          "strata.master.journal.addresses",
          "",
          "Every master's journal address as host:port, comma-separated, in the order of "
              + "strata.master.addresses. Empty means each master's host with "
              + "strata.master.journal.port.");
  public static final ConfigKey JOURNAL_ELECTION_TIMEOUT =
      ConfigKey.duration(
          "strata.master.journal.election.timeout",
          "1s",
          "Time without word from the leader after which a follower starts an election (a random "
              + "time between this and twice this); a lost leader is replaced within about that.");
  public static final ConfigKey JOURNAL_BATCH_BYTES =
      ConfigKey.bytes(
          "strata.master.journal.batch.bytes",
          "1MB",
          "Most bytes of changes one replicated journal entry carries: changes made while earlier "
              + "entries commit share the next entry up to this (a larger change goes alone).");
  public static final ConfigKey JOURNAL_BATCH_WAIT =
      ConfigKey.duration(
          "strata.master.journal.batch.wait",
          "5ms",
          "Longest time a change waits for the journal entries being committed before it is sent "
              + "in an entry of its own; a change that finds fewer in flight is sent at once.");
  public static final ConfigKey JOURNAL_BATCH_IN_FLIGHT =
      ConfigKey.integer(
          "strata.master.journal.batch.inflight",
          1,
          "entries",
          "Journal entries being committed at once before new changes gather into the next one.");
  public static final ConfigKey UFS_TIMEOUT_LOCAL =
      ConfigKey.duration(
          "strata.master.ufs.local.timeout",
          "30s",
          "Longest time one metadata call of the master to a local-folder (file://) under store "
              + "may take (an NFS folder can hang) before the call fails naming the mount.");
  public static final ConfigKey UFS_TIMEOUT_HDFS =
      ConfigKey.duration(
          "strata.master.ufs.hdfs.timeout",
          "30s",
          "Longest time one metadata call of the master to an HDFS (hdfs://) under store may take "
              + "before the call fails naming the mount.");
  public static final ConfigKey UFS_TIMEOUT_S3 =
      ConfigKey.duration(
          "strata.master.ufs.s3.timeout",
          "30s",
          "Longest time one metadata call of the master to an S3 (s3://) under store may take, "
              + "listing pages included, before the call fails naming the mount.");
  public static final ConfigKey UFS_TIMEOUT_OTHER =
      ConfigKey.duration(
          "strata.master.ufs.timeout",
          "30s",
          "Longest time one metadata call of the master to an under store of any other scheme may "
              + "take before the call fails naming the mount.");
  public static final ConfigKey UFS_UNAVAILABLE_AFTER =
      ConfigKey.integer(
          "strata.master.ufs.unavailable.after",
          2,
          "timeouts",
          "Timeouts in a row after which a mount's store is taken as not answering: its calls "
              + "then fail at once for strata.master.ufs.unavailable.period instead of waiting.");
  public static final ConfigKey UFS_UNAVAILABLE_PERIOD =
      ConfigKey.duration(
          "strata.master.ufs.unavailable.period",
          "10s",
          "How long calls to a store taken as not answering fail at once; after it one call is "
              + "let through, and its answer decides.");
  public static final ConfigKey UFS_THREADS =
      ConfigKey.integer(
          "strata.master.ufs.threads",
          16,
          "threads",
          "Per mount: master calls that wait on its under store at once (more queue), "
              + "and store calls in progress at once; a store that hangs holds only these.");
  public static final ConfigKey PATH_LOCK_TIMEOUT =
      ConfigKey.duration(
          "strata.master.path.lock.timeout",
          "60s",
          "Longest time a change waits for another change of the same path to finish.");
  public static final ConfigKey BACKUP_DIR =
      ConfigKey.string(
          "strata.master.backup.dir",
          "${strata.home}/master/backups",
          "Folder on the leading master where backups are written unless a command names another.");
  public static final ConfigKey BACKUP_INTERVAL =
      ConfigKey.duration(
          "strata.master.backup.interval",
          "0",
          "Time between scheduled metadata backups taken by the leader (0 turns them off).");
  public static final ConfigKey BACKUP_RETAIN =
      ConfigKey.integer(
          "strata.master.backup.retain",
          3,
          "backups",
          "Scheduled backups kept in strata.master.backup.dir; older ones are removed.");
  public static final ConfigKey RESTORE_BACKUP =
      ConfigKey.string(
          "strata.master.restore.backup",
          "",
          "Backup folder from which a master with an empty journal starts a fresh group "
              + "(`strata master start --restore`); ignored when the journal holds state.");
}
