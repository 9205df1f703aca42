package io.strata.master.ufs;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.conf.ConfigKey;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.MountInfo;
import io.strata.underfs.UnderFileSystem;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link StoreGuard} of each mount, made when a mount's store is first used, with the timeout
 * of its store's kind: {@code strata.master.ufs.local.timeout} for {@code file://}, {@code
 * .hdfs.timeout}, {@code .s3.timeout}, and {@code strata.master.ufs.timeout} for other schemes.
 */
public final class StoreGuards implements AutoCloseable {
  private final StrataConfig conf;
  private final MeterRegistry registry;
  private final int threads;
  private final int unavailableAfter;
  private final Duration unavailablePeriod;
  private final ConcurrentHashMap<String, StoreGuard> guards = new ConcurrentHashMap<>();

  public StoreGuards(StrataConfig conf, MeterRegistry registry) {
    this.conf = conf;
    this.registry = registry;
    this.threads = conf.getInt(MasterKeys.UFS_THREADS);
    this.unavailableAfter = conf.getInt(MasterKeys.UFS_UNAVAILABLE_AFTER);
    this.unavailablePeriod = conf.getDuration(MasterKeys.UFS_UNAVAILABLE_PERIOD);
  }

  /** The key that bounds calls to stores of a URI's scheme. */
  public static ConfigKey timeoutKey(String uri) {
    int sep = uri.indexOf("://");
    String scheme = sep < 0 ? "" : uri.substring(0, sep).toLowerCase(Locale.ROOT);
    return switch (scheme) {
      case "file" -> MasterKeys.UFS_TIMEOUT_LOCAL;
      case "hdfs" -> MasterKeys.UFS_TIMEOUT_HDFS;
      case "s3", "s3a" -> MasterKeys.UFS_TIMEOUT_S3;
      default -> MasterKeys.UFS_TIMEOUT_OTHER;
    };
  }

  /** A mount's store with every metadata call bounded by the mount's guard. */
  public UnderFileSystem guarded(MountInfo mount, UnderFileSystem store) {
    return new GuardedStore(
        store,
        guard(mount.getMountId() + " " + mount.getUfsUri(), mount.getPath(), mount.getUfsUri()));
  }

  /** A store not mounted yet (being checked before a mount at {@code path}), bounded too. */
  public UnderFileSystem guarded(String path, String uri, UnderFileSystem store) {
    return new GuardedStore(store, guard("mounting " + path + " " + uri, path, uri));
  }

  private StoreGuard guard(String key, String path, String uri) {
    return guards.computeIfAbsent(
        key,
        k -> {
          ConfigKey timeout = timeoutKey(uri);
          return new StoreGuard(
              path,
              uri,
              conf.getDuration(timeout),
              timeout.name(),
              unavailableAfter,
              unavailablePeriod,
              threads,
              registry);
        });
  }

  /** How each mounted store fares, in the order given (mounts whose store was never used too). */
  public List<StoreGuard.Health> health(Collection<MountInfo> mounts) {
    List<StoreGuard.Health> out = new ArrayList<>();
    for (MountInfo m : mounts) {
      StoreGuard g = guards.get(m.getMountId() + " " + m.getUfsUri());
      out.add(
          g != null
              ? g.health()
              : new StoreGuard.Health(m.getPath(), m.getUfsUri(), true, 0, 0, 0, 0, 0));
    }
    return out;
  }

  /** Stops guarding a mount that was removed. */
  public void forget(MountInfo mount) {
    StoreGuard g = guards.remove(mount.getMountId() + " " + mount.getUfsUri());
    if (g != null) {
      g.close();
    }
  }

  @Override
  public void close() {
    for (StoreGuard g : guards.values()) {
      g.close();
    }
    guards.clear();
  }
}
