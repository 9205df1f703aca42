package io.strata.common.conf;

/** Keys read by the FUSE mount ({@code integration/fuse}). */
public final class FuseKeys {
  private FuseKeys() {}

  public static final ConfigKey METADATA_CACHE_TTL = ConfigKey.duration(
      "strata.fuse.metadata.cache.ttl", "1s",
      "How long the mount answers lookups and getattr of a path (found or missing) from its own"
          + " cache; 1s, like the kernel's attribute cache, bounds staleness as before while one"
          + " open costs one master call instead of several; raise it for data that never"
          + " changes, 0 turns the cache off.");
  public static final ConfigKey METADATA_CACHE_SIZE = ConfigKey.integer(
      "strata.fuse.metadata.cache.size", 100_000, "entries",
      "Most paths the mount's metadata cache holds; the least used ones go first.");
  public static final ConfigKey ATTR_TIMEOUT = ConfigKey.duration("strata.fuse.attr.timeout",
      "1s", "Kernel attribute cache time (libfuse attr_timeout) the mount sets unless -o gives"
          + " attr_timeout.");
  public static final ConfigKey ENTRY_TIMEOUT = ConfigKey.duration("strata.fuse.entry.timeout",
      "1s", "Kernel name lookup cache time (libfuse entry_timeout) the mount sets unless -o gives"
          + " entry_timeout.");
  public static final ConfigKey MAX_READ = ConfigKey.bytes("strata.fuse.max.read", "128KB",
      "Largest read request the kernel sends (libfuse max_read), set unless -o gives max_read;"
          + " 0 leaves it to the kernel.");
  public static final ConfigKey HEAP_SIZE = ConfigKey.bytes("strata.fuse.heap.size", "1GB",
      "Java heap bound (-Xmx) of a mount process started by `strata fuse mount`.");
  public static final ConfigKey DIRECT_MEMORY_SIZE = ConfigKey.bytes(
      "strata.fuse.direct.memory.size", "512MB",
      "Direct (off-heap) memory bound (-XX:MaxDirectMemorySize) of a mount process started by"
          + " `strata fuse mount`; Netty's buffers count under it.");
  public static final ConfigKey MOUNT_TIMEOUT = ConfigKey.duration("strata.fuse.mount.timeout",
      "30s", "How long `strata fuse mount` waits for the mount to appear in /proc/mounts, and"
          + " `strata fuse unmount` for the mount process to exit, before reporting a failure.");
}
