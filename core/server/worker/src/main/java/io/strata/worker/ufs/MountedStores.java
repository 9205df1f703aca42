package io.strata.worker.ufs;

import io.strata.common.error.StrataException;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderStores;
import io.strata.worker.master.MountOptions;
import java.io.IOException;

/**
 * Opens the under store of a path the way its mount configures it: the mount's options come from
 * the master (see {@link MountOptions}) and open stores are shared through {@link UnderStores}. May
 * call the master, so never use it on an event-loop thread.
 */
public final class MountedStores implements AutoCloseable {
  private final UnderStores stores;
  private final MountOptions mounts;

  public MountedStores(UnderStores stores, MountOptions mounts) {
    this.stores = stores;
    this.mounts = mounts;
  }

  /**
   * The store holding {@code ufsPath}, a URI of a file under mount {@code mountId}.
   *
   * @throws StrataException when the mount's options cannot be learnt or the store refuses them
   */
  public UnderFileSystem get(String ufsPath, long mountId) throws IOException {
    try {
      return stores.get(ufsPath, mounts.get(mountId));
    } catch (IllegalArgumentException e) {
      throw StrataException.invalidArgument(
          "Cannot open the under store of "
              + ufsPath
              + " (mount "
              + mountId
              + "): "
              + e.getMessage());
    }
  }

  @Override
  public void close() throws IOException {
    stores.close();
  }
}
