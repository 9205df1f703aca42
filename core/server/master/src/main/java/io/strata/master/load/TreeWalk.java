package io.strata.master.load;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.file.InodeTree;
import io.strata.master.file.Namespace;
import io.strata.proto.FileInfo;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;

/**
 * Walks the files below a namespace path depth first, children in name order, one page of one
 * directory at a time: memory is a page per level of depth, whatever the size of the tree.
 * Directories never listed are loaded from their under store as the walk reaches them.
 *
 * <p>The order is deterministic, so a walk can resume after any file it produced: given that file's
 * path, the stack of directory positions is rebuilt from the path's components. A directory that
 * vanished meanwhile is skipped; one that cannot be listed is reported to the {@link
 * ListFailureSink} and skipped.
 */
final class TreeWalk {
  /** Told about directories whose children cannot be listed. */
  interface ListFailureSink {
    void failed(String path, String reason);
  }

  /** A directory being walked: the next page starts after {@code after}. */
  private static final class Frame {
    final String path;
    long dirId;
    String after;
    Iterator<FileInfo> page;
    boolean lastPage;

    Frame(String path, String after) {
      this.path = path;
      this.after = after;
    }
  }

  private final Namespace namespace;
  private final int pageSize;
  private final ListFailureSink failures;
  private final Deque<Frame> stack = new ArrayDeque<>();
  private FileInfo single;

  /**
   * @param resumeAfter path of a file this walk produced before, to continue after it; "" to start
   *     at the beginning
   * @throws IOException when the root itself cannot be read (NOT_FOUND when it does not exist)
   */
  TreeWalk(
      Namespace namespace, String root, String resumeAfter, int pageSize, ListFailureSink failures)
      throws IOException {
    this.namespace = namespace;
    this.pageSize = Math.max(1, pageSize);
    this.failures = failures;
    Namespace.Listing listing = Namespace.join(namespace.openListing(root, null));
    if (listing.file() != null) {
      single = resumeAfter.equals(root) ? null : listing.file();
      return;
    }
    Frame top = new Frame(root, "");
    top.dirId = listing.dirId();
    stack.push(top);
    if (!resumeAfter.isEmpty()
        && PathNames.isUnder(resumeAfter, root)
        && !resumeAfter.equals(root)) {
      List<String> parts = PathNames.components(resumeAfter);
      int depth = PathNames.components(root).size();
      String dir = root;
      for (int i = depth; i < parts.size(); i++) {
        Frame f = stack.peek();
        f.after = parts.get(i);
        if (i < parts.size() - 1) {
          dir = PathNames.join(dir, parts.get(i));
          stack.push(new Frame(dir, ""));
        }
      }
    }
  }

  /** The next file in walk order, or null when the walk is over. */
  FileInfo next() throws IOException {
    if (single != null) {
      FileInfo f = single;
      single = null;
      return f;
    }
    while (!stack.isEmpty()) {
      Frame f = stack.peek();
      if (f.page == null || !f.page.hasNext()) {
        if (f.lastPage || !fetchPage(f)) {
          stack.pop();
        }
        continue;
      }
      FileInfo child = f.page.next();
      f.after = child.getName();
      if (child.getDirectory()) {
        stack.push(new Frame(child.getPath(), ""));
        continue;
      }
      return child;
    }
    return null;
  }

  /** Reads the frame's next page; false when there is none or the directory is gone. */
  private boolean fetchPage(Frame f) throws IOException {
    if (f.dirId == 0) {
      try {
        Namespace.Listing listing = Namespace.join(namespace.openListing(f.path, null));
        if (listing.file() != null) {
          return false;
        }
        f.dirId = listing.dirId();
      } catch (StrataException e) {
        if (e.code() != ErrorCode.NOT_FOUND) {
          failures.failed(f.path, e.getMessage());
        }
        return false;
      } catch (IOException e) {
        failures.failed(f.path, "cannot list the directory: " + e.getMessage());
        return false;
      }
    }
    // Staged uploads are not loaded: they are not files of the namespace yet.
    InodeTree.Page page = namespace.listPage(f.dirId, f.after, pageSize, false, false);
    f.lastPage = page.end();
    f.page = page.files().iterator();
    if (page.files().isEmpty()) {
      f.after = page.last();
    }
    return !page.files().isEmpty() || !page.end();
  }
}
