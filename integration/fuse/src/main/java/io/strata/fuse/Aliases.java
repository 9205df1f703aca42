package io.strata.fuse;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The names this mount has seen of each file that has several (hard links), by inode number. The
 * kernel holds each name of such a file as a node of its own, with its own attributes and pages;
 * when the mount changes the file through one name, the others must be dropped from the kernel's
 * and the mount's caches at once, before the call returns, or a {@code stat} of another name right
 * after would show the old attributes. Bounded; a file evicted or never seen by name is left to the
 * master's change notices, which name every name of a file.
 */
final class Aliases {
  private final Cache<Long, Set<String>> names;

  Aliases(long maxFiles) {
    this.names = Caffeine.newBuilder().maximumSize(Math.max(16, maxFiles)).build();
  }

  /** Records that {@code path} is a name of file {@code inode}, which has several. */
  void seen(long inode, String path) {
    Set<String> known = names.get(inode, k -> ConcurrentHashMap.newKeySet());
    if (!known.contains(path)) {
      known.add(path);
    }
  }

  /** The other names of file {@code inode} this mount knows, besides {@code path}. */
  List<String> othersOf(long inode, String path) {
    Set<String> known = names.getIfPresent(inode);
    if (known == null) {
      return List.of();
    }
    return known.stream().filter(p -> !p.equals(path)).toList();
  }

  /** {@code path} is no longer a name of file {@code inode}. */
  void forget(long inode, String path) {
    Set<String> known = names.getIfPresent(inode);
    if (known != null) {
      known.remove(path);
    }
  }
}
