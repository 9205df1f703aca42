package io.strata.fuse;

import io.strata.common.PathNames;

/**
 * How the paths of a mount map to namespace paths: the mount shows the namespace folder {@code
 * root} at its own root. Immutable.
 */
record MountPaths(String root) {
  /** The namespace path behind a path of the mount ({@code "/"} or empty is the root). */
  String toNamespace(String mountPath) {
    if (mountPath == null || mountPath.isEmpty() || mountPath.equals("/")) {
      return root;
    }
    return root.equals(PathNames.ROOT) ? mountPath : root + mountPath;
  }

  /** The path of the mount that shows a namespace path, or null when it is outside the mount. */
  String toMount(String namespacePath) {
    if (root.equals(PathNames.ROOT)) {
      return namespacePath;
    }
    if (namespacePath.equals(root)) {
      return PathNames.ROOT;
    }
    return namespacePath.startsWith(root + "/") ? namespacePath.substring(root.length()) : null;
  }
}
