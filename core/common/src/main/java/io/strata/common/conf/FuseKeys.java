package io.strata.common.conf;

/** Keys read by the FUSE mount ({@code integration/fuse}). */
public final class FuseKeys {
  private FuseKeys() {}

  public static final ConfigKey METADATA_CACHE_TTL =
      ConfigKey.duration(
          "strata.fuse.metadata.cache.ttl",
          "1s",
          "How long the mount answers for a path (found or missing) from its own cache when nothing"
              + " else vouches for the answer: while the master's change stream is in step, a found"
              + " path is kept until a change notice drops it (or its mount's sync interval runs"
              + " out), so this bounds only missing paths and the time the stream is down; 0 turns"
              + " the cache off.");
  public static final ConfigKey METADATA_WATCH =
      ConfigKey.bool(
          "strata.fuse.metadata.watch.enabled",
          true,
          "Keep cached statuses until the master's change stream says they changed (within about"
              + " 100 ms of the change), and drop the kernel's cached names and attributes of changed"
              + " paths; false holds every entry to strata.fuse.metadata.cache.ttl.");
  public static final ConfigKey METADATA_LIST_THREADS =
      ConfigKey.integer(
          "strata.fuse.metadata.list.threads",
          4,
          "threads",
          "Threads that list a folder when a path in it is looked up before the folder was listed,"
              + " so that a loader reading names from an index costs one listing per folder instead"
              + " of a master call per file; 0 asks the master for each path.");
  public static final ConfigKey METADATA_CACHE_SIZE =
      ConfigKey.integer(
          "strata.fuse.metadata.cache.size",
          100_000,
          "entries",
          "Most paths the mount's metadata cache holds; the least used ones go first.");
  public static final ConfigKey ATTR_TIMEOUT =
      ConfigKey.duration(
          "strata.fuse.attr.timeout",
          "10s",
          "Kernel attribute cache time (libfuse attr_timeout) the mount sets unless -o gives"
              + " attr_timeout; a changed path is dropped from the kernel's caches when its change"
              + " notice arrives, and while the change stream is down every answer is dropped each"
              + " strata.fuse.metadata.cache.ttl, so this bounds only what the mount cannot learn"
              + " of.");
  public static final ConfigKey ENTRY_TIMEOUT =
      ConfigKey.duration(
          "strata.fuse.entry.timeout",
          "10s",
          "Kernel name lookup cache time (libfuse entry_timeout) the mount sets unless -o gives"
              + " entry_timeout; dropped on change notices as strata.fuse.attr.timeout is.");
  public static final ConfigKey MAX_READ =
      ConfigKey.bytes(
          "strata.fuse.max.read",
          "128KB",
          "Largest read request the kernel sends (libfuse max_read), set unless -o gives max_read;"
              + " 0 leaves it to the kernel.");
  public static final ConfigKey HEAP_SIZE =
      ConfigKey.bytes(
          "strata.fuse.heap.size",
          "1GB",
          "Java heap bound (-Xmx) of a mount process started by `strata fuse mount`.");
  public static final ConfigKey DIRECT_MEMORY_SIZE =
      ConfigKey.bytes(
          "strata.fuse.direct.memory.size",
          "512MB",
          "Direct (off-heap) memory bound (-XX:MaxDirectMemorySize) of a mount process started by"
              + " `strata fuse mount`; Netty's buffers count under it.");
  public static final ConfigKey LOG_MAX_SIZE =
      ConfigKey.bytes(
          "strata.fuse.log.max.size",
          "64MB",
          "Size at which the log of a mount process started by `strata fuse mount` is rotated"
              + " (gzipped to fuse-<mount point>.log.1.gz, the older ones shifted up).");
  public static final ConfigKey LOG_MAX_FILES =
      ConfigKey.integer(
          "strata.fuse.log.max.files",
          5,
          "files",
          "Rotated logs kept per mount beside the current one (1 to 20; logback keeps"
              + " at most 20), so a mount's logs never exceed this many times"
              + " strata.fuse.log.max.size.");
  public static final ConfigKey MOUNT_TIMEOUT =
      ConfigKey.duration(
          "strata.fuse.mount.timeout",
          "30s",
          "How long `strata fuse mount` waits for the mount to appear in /proc/mounts and"
              + " answer, and `strata fuse unmount` for the mount process to exit, before reporting a"
              + " failure.");
  public static final ConfigKey PAGE_CACHE_SIZE =
      ConfigKey.bytes(
          "strata.fuse.page.cache.size",
          "256MB",
          "Bytes of file data the mount keeps in its own page cache (heap), shared by every"
              + " open file; a quarter of the default 1GB heap; 0 turns the cache (and read-ahead)"
              + " off so every read goes to the workers.");
  public static final ConfigKey PAGE_CACHE_PAGE_SIZE =
      ConfigKey.bytes(
          "strata.fuse.page.cache.page.size",
          "256KB",
          "Unit of the mount's page cache and of sequential fetches, a power of two of at least 4KB;"
              + " 256KB is two default max_read requests, so one fetch serves two kernel reads while"
              + " a 256MB cache still holds only about a thousand entries (random reads fetch exactly"
              + " what they ask whatever this is).");
  public static final ConfigKey READ_AHEAD_MAX =
      ConfigKey.bytes(
          "strata.fuse.readahead.max",
          "8MB",
          "Largest read-ahead window of a handle reading sequentially; the window starts at"
              + " one page and doubles with each sequential read; 0 turns read-ahead off.");
  public static final ConfigKey READ_AHEAD_THREADS =
      ConfigKey.integer(
          "strata.fuse.readahead.threads",
          4,
          "threads",
          "Threads of the mount that fetch read-ahead pages in the background; when their queue is"
              + " full, read-ahead is skipped rather than waited for; 0 turns read-ahead off.");
  public static final ConfigKey ALLOW_OTHER =
      ConfigKey.bool(
          "strata.fuse.allow.other",
          true,
          "Mount with allow_other, so users other than the mounting one reach the mount (the kernel"
              + " still checks each access against the namespace's owner, group and mode); used only"
              + " when the mount runs as root or /etc/fuse.conf has user_allow_other.");
  public static final ConfigKey WEB_PORT =
      ConfigKey.integer(
          "strata.fuse.web.port",
          0,
          "port",
          "Port of the mount process's /metrics and /health endpoint; 0 picks a free port (the log"
              + " names it), -1 serves none.");
  public static final ConfigKey WEB_BIND_HOST =
      ConfigKey.string(
          "strata.fuse.web.bind.host",
          "127.0.0.1",
          "Address the mount process's metrics endpoint listens on.");
  public static final ConfigKey UPCALL_THREADS =
      ConfigKey.integer(
          "strata.fuse.upcall.threads",
          32,
          "threads",
          "Threads of the mount process that take requests from the kernel and answer"
              + " them, each kept for the mount's life; at most this many requests (reads, lookups,"
              + " ...) are served at once, the rest wait in the kernel. 0 hands the requests to"
              + " libfuse's own loop instead, which starts and ends a thread as load changes and"
              + " costs far more per request under concurrent reads.");
  public static final ConfigKey WRITE_STAGING_DIR =
      ConfigKey.string(
          "strata.fuse.write.staging.dir",
          "${strata.home}/fuse/staging",
          "Folder of the local copies of files open for writing through a mount (one subfolder per"
              + " mount point); a file is written through to its under store from there on close"
              + " or fsync, and a copy whose write-through failed stays there, reported in the"
              + " mount's log, until it is written through or the mount starts again.");
  public static final ConfigKey WRITE_STAGING_MAX_SIZE =
      ConfigKey.bytes(
          "strata.fuse.write.staging.max.size",
          "10GB",
          "Most bytes the staged copies of one mount may hold on local disk at once; a write past"
              + " it answers ENOSPC (No space left on device) until copies are written through.");
}
