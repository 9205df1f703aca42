package io.strata.master.ttl;

import io.strata.master.file.Namespace;
import io.strata.proto.journal.InodeEntry;
import java.io.IOException;
import java.util.Optional;

/**
 * What a passed time to live does to the namespace: frees as {@code strata fs free -R} does and
 * deletes as {@code strata fs rm -R} does. Each action holds the path's write lock and acts only
 * when the inode is still exactly as the checker saw it, so a time to live removed, a path touched
 * or a file replaced meanwhile is never acted on.
 */
public final class TtlActions implements TtlChecker.Target {
  private final Namespace namespace;

  public TtlActions(Namespace namespace) {
    this.namespace = namespace;
  }

  /**
   * Frees, then journals the inode without its time to live: it stays in the namespace and the
   * store, and is not freed again at every round after.
   */
  @Override
  public Optional<String> free(InodeEntry expired) throws IOException {
    return Namespace.join(namespace.expireByFreeing(expired));
  }

  @Override
  public Optional<String> delete(InodeEntry expired) throws IOException {
    return Namespace.join(namespace.expireByDeleting(expired));
  }
}
