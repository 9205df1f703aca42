package io.strata.master.ttl;

import io.strata.master.file.InodeTree;
import io.strata.master.file.Namespace;
import io.strata.proto.journal.InodeEntry;
import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * What a passed time to live does to the namespace: frees as {@code strata fs free -R} does
 * and deletes as {@code strata fs rm -R} does. Each action runs under the tree's write lock and
 * only when the inode is still exactly as the checker saw it, so a time to live removed, a
 * path touched or a file replaced meanwhile is never acted on.
 */
public final class TtlActions implements TtlChecker.Target {
  private final Namespace namespace;
  private final InodeTree tree;

  public TtlActions(Namespace namespace, InodeTree tree) {
    this.namespace = namespace;
    this.tree = tree;
  }

  /**
   * Frees, then journals the inode without its time to live: it stays in the namespace and
   * the store, and is not freed again at every round after.
   */
  @Override
  public Optional<String> free(InodeEntry expired) throws IOException {
    return tree.write(() -> {
      Optional<String> path = unchangedPath(expired);
      if (path.isPresent()) {
        namespace.free(expired);
        tree.journal(List.of(InodeTree.inode(
            expired.toBuilder().clearTtlMs().clearTtlAction())));
      }
      return path;
    });
  }

  @Override
  public Optional<String> delete(InodeEntry expired) throws IOException {
    return tree.write(() -> {
      Optional<String> path = unchangedPath(expired);
      if (path.isPresent()) {
        namespace.delete(path.get(), true, expired.getId());
      }
      return path;
    });
  }

  /** The inode's path when it is unchanged since it was seen; write lock held. */
  private Optional<String> unchangedPath(InodeEntry seen) {
    if (!seen.equals(tree.store().get(seen.getId()))) {
      return Optional.empty();
    }
    return Optional.ofNullable(tree.pathOf(seen.getId()));
  }
}
