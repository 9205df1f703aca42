package io.strata.master.file;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.metrics.MetricNames;
import io.strata.master.ufs.StoreGuard;
import io.strata.master.ufs.StoreGuards;
import io.strata.proto.FileType;
import io.strata.proto.MountInfo;
import io.strata.proto.journal.InodeEntry;
import io.strata.underfs.UfsFileType;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderStores;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.Map;
import java.util.Optional;

/**
 * Reads metadata from under stores and turns it into inodes. It opens each mount's store through
 * the shared {@link UnderStores} with the mount's options (less Strata's own, see {@link
 * MountOptionPolicy}), every metadata call bounded by the mount's {@link StoreGuard}, and fills
 * what a store does not know (mode, owner, group) with the defaults of files created through
 * Strata.
 */
public final class UfsMetadataLoader {
  static final int DEFAULT_DIR_MODE = 0755;
  static final int DEFAULT_FILE_MODE = 0644;

  private final UnderStores stores;
  private final StoreGuards guards;
  private final long defaultBlockSize;
  private final String owner;
  private final String group;
  private final Counter loads;

  /** Each mount's guarded store, so the hot path does not look the store up again. */
  private final java.util.concurrent.ConcurrentHashMap<MountInfo, UnderFileSystem> mounted =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * @param owner owner of inodes created through Strata (the master's user)
   * @param group their group
   */
  public UfsMetadataLoader(
      UnderStores stores,
      StoreGuards guards,
      long defaultBlockSize,
      String owner,
      String group,
      MeterRegistry registry) {
    this.stores = stores;
    this.guards = guards;
    this.defaultBlockSize = defaultBlockSize;
    this.owner = owner;
    this.group = group;
    this.loads =
        Counter.builder(MetricNames.MASTER_UFS_METADATA_LOADS)
            .description("Inodes created from under-store metadata (first access or a sync)")
            .register(registry);
  }

  /** The store of a mount, every metadata call bounded in time (see {@link StoreGuard}). */
  public UnderFileSystem store(MountInfo mount) throws IOException {
    UnderFileSystem known = mounted.get(mount);
    if (known != null) {
      return known;
    }
    UnderFileSystem store =
        guards.guarded(
            mount,
            stores.get(mount.getUfsUri(), MountOptionPolicy.storeOptions(mount.getOptionsMap())));
    mounted.put(mount, store);
    return store;
  }

  /**
   * The store of a URI not yet mounted, opened with the options it would be mounted with at {@code
   * path}, its calls bounded as a mount's are.
   */
  public UnderFileSystem storeToMount(String path, String uri, Map<String, String> options)
      throws IOException {
    return guards.guarded(path, uri, stores.get(uri, MountOptionPolicy.storeOptions(options)));
  }

  /** How each mount's store answers, in the order given. */
  java.util.List<StoreGuard.Health> health(java.util.Collection<MountInfo> mounts) {
    return guards.health(mounts);
  }

  /** Stops guarding the store of a mount that was removed. */
  void forget(MountInfo mount) {
    mounted.remove(mount);
    guards.forget(mount);
  }

  /** The status of a path in its mount's store, or empty when the store does not have it. */
  public Optional<UfsStatus> stat(MountTable.Resolution r) throws IOException {
    try {
      return Optional.of(store(r.mount()).getStatus(r.ufsUri()));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  /** An inode mirroring an under-store entry just read: complete, children not yet loaded. */
  public InodeEntry.Builder toInode(UfsStatus s, long id, long parentId, String name) {
    return toInode(s, id, parentId, name, System.currentTimeMillis());
  }

  /**
   * An inode mirroring an under-store entry read at {@code syncMs}: complete, children not yet
   * loaded, a file checked at that time.
   */
  public InodeEntry.Builder toInode(UfsStatus s, long id, long parentId, String name, long syncMs) {
    FileType type = fileType(s.type());
    boolean content = !s.directory() && type == FileType.FILE_TYPE_PLAIN;
    return InodeEntry.newBuilder()
        .setId(id)
        .setParentId(parentId)
        .setName(name)
        .setDirectory(s.directory())
        .setLength(s.directory() ? 0 : s.length())
        .setBlockSize(content ? defaultBlockSize : 0)
        .setModificationTimeMs(s.modificationTimeMs())
        .setFileType(type)
        .setSymlinkTarget(s.symlinkTarget())
        .setRdev(s.rdev())
        .setMode(
            s.mode() != 0
                ? s.mode()
                : s.directory()
                    ? DEFAULT_DIR_MODE
                    : type == FileType.FILE_TYPE_SYMLINK ? 0777 : DEFAULT_FILE_MODE)
        .setOwner(s.owner().isEmpty() ? owner : s.owner())
        .setGroup(s.group().isEmpty() ? group : s.group())
        .setComplete(true)
        .setUfsFingerprint(s.fingerprint())
        .setChildrenLoaded(false)
        .setUfsSyncTimeMs(s.directory() ? 0 : syncMs);
  }

  /**
   * A new inode created through Strata (not loaded): a file starts incomplete and empty, a
   * directory starts with its (empty) children known as of now.
   *
   * @param mode permission bits; 0 for the default (0755 for a directory, 0644 for a file)
   * @param owner the owner; "" for the master's default
   * @param group the group; "" for the master's default
   */
  public InodeEntry.Builder newInode(
      long id,
      long parentId,
      String name,
      boolean directory,
      int mode,
      String owner,
      String group) {
    long nowNs = InodeTimes.nowNs();
    return InodeTimes.created(InodeEntry.newBuilder(), nowNs)
        .setId(id)
        .setParentId(parentId)
        .setName(name)
        .setDirectory(directory)
        .setBlockSize(directory ? 0 : defaultBlockSize)
        .setMode(mode != 0 ? mode : directory ? DEFAULT_DIR_MODE : DEFAULT_FILE_MODE)
        .setOwner(owner.isEmpty() ? this.owner : owner)
        .setGroup(group.isEmpty() ? this.group : group)
        .setComplete(directory)
        .setChildrenLoaded(directory)
        .setUfsSyncTimeMs(nowNs / 1_000_000L);
  }

  /** The namespace's kind of file for what an under store reports. */
  static FileType fileType(UfsFileType type) {
    return switch (type) {
      case SYMLINK -> FileType.FILE_TYPE_SYMLINK;
      case FIFO -> FileType.FILE_TYPE_FIFO;
      case SOCKET -> FileType.FILE_TYPE_SOCKET;
      case CHAR_DEVICE -> FileType.FILE_TYPE_CHAR_DEVICE;
      case BLOCK_DEVICE -> FileType.FILE_TYPE_BLOCK_DEVICE;
      default -> FileType.FILE_TYPE_PLAIN;
    };
  }

  /** Counts inodes created from under-store metadata. */
  void countLoaded(int n) {
    loads.increment(n);
  }

  /** Whether an under-store name can be a namespace name. */
  static boolean validName(String name) {
    return !name.isEmpty()
        && !name.equals(".")
        && !name.equals("..")
        && name.indexOf('/') < 0
        && name.indexOf('\0') < 0;
  }
}
