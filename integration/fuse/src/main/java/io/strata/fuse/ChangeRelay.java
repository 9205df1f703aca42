package io.strata.fuse;

import io.strata.client.NamespaceWatch;
import io.strata.common.PathNames;
import io.strata.proto.NamespaceChange;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Passes the master's change stream on to a mount: every change notice drops the path from the
 * {@link MetadataCache} and, for paths inside the mount, from the kernel's caches
 * ({@link KernelEntries}); a reset drops everything; while the stream is broken the metadata
 * cache holds every entry to its TTL.
 */
final class ChangeRelay implements NamespaceWatch.Listener {
  private static final Logger LOG = LoggerFactory.getLogger(ChangeRelay.class);

  private final String root;
  private final MetadataCache metadata;
  private final KernelEntries kernel;

  /** @param root the namespace folder shown at the mount's root */
  ChangeRelay(String root, MetadataCache metadata, KernelEntries kernel) {
    this.root = root;
    this.metadata = metadata;
    this.kernel = kernel;
  }

  @Override
  public void connected(boolean reset) {
    if (reset) {
      LOG.info("The master could not send every change this mount missed; dropping its cached"
          + " statuses");
      metadata.reset();
      kernel.invalidateAll();
    }
    metadata.watchLive(true);
  }

  @Override
  public void changed(List<NamespaceChange> changes) {
    for (NamespaceChange c : changes) {
      metadata.changed(c.getPath(), c.getSubtree());
      String inMount = mountPath(c.getPath());
      if (inMount != null) {
        kernel.invalidate(inMount, c.getSubtree());
      } else if (c.getSubtree() && PathNames.isUnder(root, c.getPath())) {
        // A folder above the mount's root moved or went: everything shown changed.
        kernel.invalidateAll();
      }
    }
  }

  @Override
  public void disconnected(String reason) {
    metadata.watchLive(false);
  }

  /** The path of the mount that shows a namespace path, or null when it is outside the mount. */
  private String mountPath(String namespacePath) {
    if (root.equals(PathNames.ROOT)) {
      return namespacePath;
    }
    if (namespacePath.equals(root)) {
      return PathNames.ROOT;
    }
    return namespacePath.startsWith(root + "/") ? namespacePath.substring(root.length()) : null;
  }
}
