package io.strata.worker.master;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.grpc.StatusRuntimeException;
import io.strata.common.error.StrataException;
import io.strata.proto.ListMountsRequest;
import io.strata.proto.MountInfo;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The options of each mount (credentials, endpoints), which the worker needs to open an under store
 * the way the master does. Learnt from the master's ListMounts -- with secret values, which
 * listings for people mask, and without the options that configure Strata itself rather than the
 * store -- and kept: a mount's options do not change while it exists. Mount 0, and a mount the
 * master does not know, have no options; an unknown id is not asked for again for a few seconds.
 */
public final class MountOptions {
  private final WorkerMasterClient master;
  private final Map<Long, Map<String, String>> known = new ConcurrentHashMap<>();
  private final Cache<Long, Boolean> recentlyMissing =
      Caffeine.newBuilder().expireAfterWrite(Duration.ofSeconds(5)).maximumSize(10_000).build();

  public MountOptions(WorkerMasterClient master) {
    this.master = master;
  }

  /**
   * The options of a mount.
   *
   * @throws StrataException when the master cannot be asked; the message names it
   */
  public Map<String, String> get(long mountId) throws StrataException {
    if (mountId == 0) {
      return Map.of();
    }
    Map<String, String> options = known.get(mountId);
    if (options != null) {
      return options;
    }
    if (recentlyMissing.getIfPresent(mountId) != null) {
      return Map.of();
    }
    refresh();
    options = known.get(mountId);
    if (options == null) {
      recentlyMissing.put(mountId, Boolean.TRUE);
      return Map.of();
    }
    return options;
  }

  private synchronized void refresh() throws StrataException {
    try {
      ListMountsRequest request =
          ListMountsRequest.newBuilder().setIncludeSecrets(true).setStoreOptionsOnly(true).build();
      for (MountInfo m : master.callFileSystem(s -> s.listMounts(request)).getMountsList()) {
        known.put(m.getMountId(), Map.copyOf(m.getOptionsMap()));
      }
    } catch (StatusRuntimeException e) {
      throw StrataException.unavailable(
          "Cannot get the mount table from "
              + master.masters()
              + " ("
              + e.getStatus()
              + "); check that the master is running",
          e);
    }
  }
}
