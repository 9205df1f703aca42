package io.strata.proxy.s3;

import io.strata.client.CloseableIterator;
import io.strata.common.NameOrder;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.PriorityQueue;

/**
 * The keys of a bucket in S3's order (UTF-8 bytes of the whole key), below a prefix, after a key,
 * rolled up into common prefixes at a delimiter -- streamed from the master's paged listings one
 * folder at a time, so memory holds a page per folder level however many keys there are.
 *
 * <p>A file is the key of its path below the bucket; a folder is the key "path/" when it was
 * created as a marker or is empty, and the prefix of the keys below it. Folders and files of one
 * folder come from the master in name order, which is S3's order except that a folder "a" sorts as
 * "a/" among its siblings: it goes after siblings such as "a-b" or "a.txt" (characters below '/'),
 * so a folder is held back in a small queue until the next sibling sorts after it. A walk that
 * resumes after a key starts each folder's listing near the resume point: no name before the resume
 * key's name up to its first character below '/' can hold a key after it. With the delimiter '/', a
 * folder is a common prefix and is not listed. Not thread-safe; close it when done early.
 */
final class KeyWalk implements AutoCloseable {
  /** A key (with its status) or a common prefix (file null). */
  record Entry(String key, FileInfo file) {
    boolean commonPrefix() {
      return file == null;
    }
  }

  private static final Comparator<FileInfo> GROUP_ORDER =
      (a, b) -> NameOrder.compare(sortKey(a), sortKey(b));

  private final ProxyContext ctx;
  private final String prefix;
  private final String delimiter;
  private final String after;
  private final Deque<Frame> stack = new ArrayDeque<>();
  private String lastPrefix;
  private Entry peeked;
  private Entry startMarker;

  /**
   * @param bucketPath the bucket's folder
   * @param prefix keys must start with it ("" for all)
   * @param delimiter roll keys up at its first occurrence after the prefix (null or "" for none)
   * @param after only keys (and common prefixes) after this one (null or "" for all)
   */
  KeyWalk(ProxyContext ctx, String bucketPath, String prefix, String delimiter, String after)
      throws StrataException {
    this.ctx = ctx;
    this.prefix = prefix == null ? "" : prefix;
    this.delimiter = delimiter == null || delimiter.isEmpty() ? null : delimiter;
    this.after = after == null || after.isEmpty() ? null : after;
    int slash = this.prefix.lastIndexOf('/');
    String dirPart = this.prefix.substring(0, slash + 1);
    String namePart = this.prefix.substring(slash + 1);
    if (dirPart.startsWith("/") || dirPart.contains("//")) {
      // A key is a path of names, none of them empty: no key starts with '/' or holds "//", so
      // such a prefix matches nothing (rather than the folder the path would normalize to).
      return;
    }
    for (String segment : PathNames.components(dirPart)) {
      if (PathNames.isHidden(segment)) {
        // No key has a hidden name (staged uploads, noncurrent versions) as a segment.
        return;
      }
    }
    String startDir =
        dirPart.isEmpty()
            ? bucketPath
            : bucketPath + "/" + dirPart.substring(0, dirPart.length() - 1);
    FileInfo dir = dirPart.isEmpty() ? null : statusOrNull(startDir);
    if (!dirPart.isEmpty() && (dir == null || !dir.getDirectory())) {
      return;
    }
    Frame top = new Frame(startDir, dirPart, namePart);
    stack.push(top);
    if (dir != null && namePart.isEmpty() && (marked(dir) || top.isEmpty()) && isAfter(dirPart)) {
      startMarker = classify(dirPart, dir);
    }
  }

  private static String sortKey(FileInfo f) {
    return f.getDirectory() ? f.getName() + "/" : f.getName();
  }

  private static boolean marked(FileInfo dir) {
    return dir.getXattrsMap().containsKey(ObjectMetadata.MARKER);
  }

  private boolean isAfter(String key) {
    return after == null || NameOrder.compare(key, after) > 0;
  }

  /** The next entry without taking it; null at the end. */
  Entry peek() throws StrataException {
    if (peeked == null) {
      peeked = advance();
    }
    return peeked;
  }

  /** The next entry; null at the end. */
  Entry next() throws StrataException {
    Entry e = peek();
    peeked = null;
    return e;
  }

  /** An object key, or the common prefix it rolls up into (null when already given). */
  private Entry classify(String key, FileInfo file) {
    if (delimiter != null) {
      int at = key.indexOf(delimiter, prefix.length());
      if (at >= 0) {
        String cp = key.substring(0, at + delimiter.length());
        if (cp.equals(lastPrefix)
            || !isAfter(cp)
            || (after != null && after.startsWith(cp) && after.length() >= cp.length())) {
          return null;
        }
        lastPrefix = cp;
        return new Entry(cp, null);
      }
    }
    return new Entry(key, file);
  }

  private Entry advance() throws StrataException {
    if (startMarker != null) {
      Entry e = startMarker;
      startMarker = null;
      return e;
    }
    while (!stack.isEmpty()) {
      Frame f = stack.peek();
      FileInfo g = f.nextGroup();
      if (g == null) {
        stack.pop().close();
        continue;
      }
      String key = f.keyPrefix + g.getName();
      if (!g.getDirectory()) {
        if (!g.getComplete() || g.getFileType() != FileType.FILE_TYPE_PLAIN || !isAfter(key)) {
          // Not an object yet, or never one (a symbolic link or special file of a mount).
          continue;
        }
        Entry e = classify(key, g);
        if (e != null) {
          return e;
        }
        continue;
      }
      String dirKey = key + "/";
      if (after != null && !isAfter(dirKey) && !after.startsWith(dirKey)) {
        continue;
      }
      if (delimiter != null) {
        if (dirKey.indexOf(delimiter, prefix.length()) >= 0) {
          // Every key below the folder rolls up into the same prefix: no need to list it.
          Entry e = classify(dirKey, g);
          if (e != null) {
            return e;
          }
          continue;
        }
      }
      Frame child = new Frame(g.getPath(), dirKey, "");
      stack.push(child);
      if ((marked(g) || child.isEmpty()) && isAfter(dirKey)) {
        Entry e = classify(dirKey, g);
        if (e != null) {
          return e;
        }
      }
    }
    return null;
  }

  private FileInfo statusOrNull(String path) throws StrataException {
    try {
      return ctx.fs().getStatus(path);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return null;
      }
      throw e;
    }
  }

  @Override
  public void close() {
    while (!stack.isEmpty()) {
      stack.pop().close();
    }
  }

  /** One folder being listed: its children in S3 order, from a name-ordered listing. */
  private final class Frame implements AutoCloseable {
    final String keyPrefix;
    final String nameFilter;
    private FileInfo seed;
    private CloseableIterator<FileInfo> listing;
    private FileInfo lookahead;
    private boolean sourceDone;
    private final PriorityQueue<FileInfo> heldFolders = new PriorityQueue<>(GROUP_ORDER);

    Frame(String dirPath, String keyPrefix, String nameFilter) throws StrataException {
      this.keyPrefix = keyPrefix;
      this.nameFilter = nameFilter;
      String start = nameFilter;
      if (after != null && after.startsWith(keyPrefix)) {
        String rest = after.substring(keyPrefix.length());
        int slash = rest.indexOf('/');
        String name = slash < 0 ? rest : rest.substring(0, slash);
        int cut = 0;
        while (cut < name.length() && name.charAt(cut) >= '/') {
          cut++;
        }
        String low = name.substring(0, cut);
        if (NameOrder.compare(low, start) > 0) {
          start = low;
        }
      }
      if (!start.isEmpty()) {
        FileInfo exact = statusOrNull(PathNames.join(dirPath, start));
        if (exact != null && !PathNames.isHidden(exact.getName())) {
          seed = exact;
        }
      }
      try {
        listing = ctx.fs().listStatusAfter(dirPath, start, false);
      } catch (StrataException e) {
        if (e.code() != ErrorCode.NOT_FOUND && e.code() != ErrorCode.INVALID_ARGUMENT) {
          throw e;
        }
        sourceDone = true;
        seed = null;
      }
    }

    /** The next child from the source in name order, or null. */
    private FileInfo pull() {
      if (sourceDone) {
        return null;
      }
      FileInfo f = null;
      if (seed != null) {
        f = seed;
        seed = null;
      } else if (listing != null && listing.hasNext()) {
        f = listing.next();
      }
      if (f == null || (!nameFilter.isEmpty() && !f.getName().startsWith(nameFilter))) {
        sourceDone = true;
        closeListing();
        return null;
      }
      return f;
    }

    boolean isEmpty() {
      if (lookahead == null) {
        lookahead = pull();
      }
      return lookahead == null && heldFolders.isEmpty();
    }

    /** The next file or folder of this folder in S3 order, or null. */
    FileInfo nextGroup() {
      while (true) {
        if (lookahead == null) {
          lookahead = pull();
        }
        FileInfo held = heldFolders.peek();
        if (held != null && (lookahead == null || GROUP_ORDER.compare(held, lookahead) < 0)) {
          return heldFolders.poll();
        }
        if (lookahead == null) {
          return null;
        }
        FileInfo f = lookahead;
        lookahead = null;
        if (f.getDirectory()) {
          heldFolders.add(f);
          continue;
        }
        return f;
      }
    }

    private void closeListing() {
      if (listing != null) {
        listing.close();
        listing = null;
      }
    }

    @Override
    public void close() {
      closeListing();
    }
  }
}
