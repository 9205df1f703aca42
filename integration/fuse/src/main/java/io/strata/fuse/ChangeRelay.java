package io.strata.fuse;

import io.strata.client.NamespaceWatch;
import io.strata.common.PathNames;
import io.strata.proto.NamespaceChange;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Passes the master's change stream on to a mount: a change notice drops the path from the {@link
 * MetadataCache} and, for paths inside the mount, from the kernel's caches ({@link KernelEntries}),
 * unless the mount made the change itself and holds it already; a reset drops everything; while the
 * stream is broken the metadata cache holds every entry to its TTL, and the kernel's answers are
 * dropped as often.
 */
final class ChangeRelay implements NamespaceWatch.Listener {
  private static final Logger LOG = LoggerFactory.getLogger(ChangeRelay.class);

  private final String root;
  private final MountPaths paths;
  private final MetadataCache metadata;
  private final KernelEntries kernel;
  private final Duration ttl;
  private final String ownClientId;

  /**
   * @param root the namespace folder shown at the mount's root
   * @param ttl how long answers live while the stream is down (the metadata cache's TTL)
   * @param ownClientId the id this mount's client names its calls with: notices of changes it made
   *     itself leave its metadata cache alone, since it kept the cache true to them as it made
   *     them; "" to treat every notice alike
   */
  ChangeRelay(
      String root, MetadataCache metadata, KernelEntries kernel, Duration ttl, String ownClientId) {
    this.ownClientId = ownClientId;
    this.root = root;
    this.paths = new MountPaths(root);
    this.metadata = metadata;
    this.kernel = kernel;
    this.ttl = ttl;
  }

  @Override
  public void connected(boolean reset) {
    if (reset) {
      LOG.info(
          "The master could not send every change this mount missed; dropping its cached"
              + " statuses");
      metadata.reset();
      kernel.invalidateAll();
    }
    kernel.holdTo(Duration.ZERO);
    metadata.watchLive(true);
  }

  @Override
  public void changed(List<NamespaceChange> changes) {
    for (NamespaceChange c : changes) {
      // A change this mount made is in its metadata cache already, and the kernel learnt it
      // from the reply to its own call: dropping either again would throw away the folder
      // listings kept in step, and make the kernel look names up again under node ids that
      // the mount learns only later. The other names of a file with several are told all the
      // same, as is any path the cache does not hold.
      boolean own = !ownClientId.isEmpty() && ownClientId.equals(c.getClientId());
      if (!own || !metadata.holdsOwnChange(c.getPath())) {
        relay(c, own);
      }
    }
  }

  private void relay(NamespaceChange c, boolean own) {
    metadata.changed(c.getPath(), c.getSubtree());
    String inMount = paths.toMount(c.getPath());
    if (own && inMount != null && !c.getSubtree() && kernel.invalidateNode(inMount)) {
      // A change this mount made left the kernel's names as its replies set them (another
      // name of a file with several still stands): the node's attributes go, the name and the
      // node the mount knows for it stay, so that its next change through another name can
      // reach this one at once.
      return;
    }
    if (inMount != null) {
      kernel.invalidate(inMount, c.getSubtree());
    } else if (c.getSubtree() && PathNames.isUnder(root, c.getPath())) {
      // A folder above the mount's root moved or went: everything shown changed.
      kernel.invalidateAll();
    }
  }

  @Override
  public void disconnected(String reason) {
    metadata.watchLive(false);
    // From now on the kernel's answers live no longer than the mount's own, and what it holds
    // from before may have missed changes already.
    kernel.holdTo(ttl);
    kernel.invalidateAll();
  }
}
