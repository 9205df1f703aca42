package io.strata.common;

import io.strata.common.error.StrataException;
import java.util.ArrayList;
import java.util.List;

/**
 * Namespace paths: absolute, '/'-separated, no empty, "." or ".." components, no trailing '/'
 * except the root. Every path that enters the master or a client goes through {@link #normalize}
 * first.
 */
public final class PathNames {
  public static final String ROOT = "/";

  /**
   * The name of the hidden folder in which the S3 proxy stages multipart uploads, in the bucket's
   * own folder so that parts land in the under store the object will. Listings leave out entries of
   * this name unless they ask for hidden entries; so do load jobs.
   */
  public static final String UPLOADS_FOLDER = ".strata-uploads";

  /**
   * The name of the hidden folder in which the S3 proxy keeps the noncurrent versions and delete
   * markers of a versioned bucket, in the bucket's own folder beside {@link #UPLOADS_FOLDER} and
   * hidden the same way.
   */
  public static final String VERSIONS_FOLDER = ".strata-versions";

  private PathNames() {}

  /**
   * Whether an entry of this name is hidden: left out of listings unless they ask for hidden
   * entries, and not counted when a folder is deleted only if it holds nothing visible.
   */
  public static boolean isHidden(String name) {
    return name.equals(UPLOADS_FOLDER) || name.equals(VERSIONS_FOLDER);
  }

  /** Returns the canonical form of a path, or fails with an error that names it. */
  public static String normalize(String path) throws StrataException {
    if (path == null || path.isEmpty()) {
      throw StrataException.invalidArgument("Path is empty: give an absolute path such as /data");
    }
    if (!path.startsWith("/")) {
      throw StrataException.invalidArgument(
          "Path is not absolute: " + path + " (Strata paths start with /)");
    }
    if (path.indexOf('\0') >= 0) {
      throw StrataException.invalidArgument("Path contains a NUL character: " + path);
    }
    List<String> parts = components(path);
    for (String p : parts) {
      if (p.equals(".") || p.equals("..")) {
        throw StrataException.invalidArgument(
            "Path has a '" + p + "' component: " + path + " (give the resolved path)");
      }
    }
    return parts.isEmpty() ? ROOT : "/" + String.join("/", parts);
  }

  /** The non-empty components of a path. */
  public static List<String> components(String path) {
    List<String> parts = new ArrayList<>();
    for (String p : path.split("/")) {
      if (!p.isEmpty()) {
        parts.add(p);
      }
    }
    return parts;
  }

  /** The parent of a normalized path; the root has none (null). */
  public static String parent(String path) {
    if (path.equals(ROOT)) {
      return null;
    }
    int i = path.lastIndexOf('/');
    return i == 0 ? ROOT : path.substring(0, i);
  }

  /** The last component of a normalized path; "" for the root. */
  public static String name(String path) {
    return path.substring(path.lastIndexOf('/') + 1);
  }

  public static String join(String parent, String child) {
    return parent.equals(ROOT) ? "/" + child : parent + "/" + child;
  }

  /** True when {@code path} is {@code ancestor} or lies below it. */
  public static boolean isUnder(String path, String ancestor) {
    return path.equals(ancestor) || ancestor.equals(ROOT) || path.startsWith(ancestor + "/");
  }
}
