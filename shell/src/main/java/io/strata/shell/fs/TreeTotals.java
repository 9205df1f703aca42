package io.strata.shell.fs;

import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;

/**
 * Totals of a subtree: directories (counting the root when it is one), files, bytes and bytes
 * cached. Walks the tree depth first with streamed listings, so memory grows with depth, not with
 * the size of a directory.
 */
record TreeTotals(long directories, long files, long bytes, long cachedBytes) {
  static TreeTotals of(FileSystem fs, FileInfo root) throws StrataException {
    if (!root.getDirectory()) {
      return new TreeTotals(0, 1, root.getLength(), root.getCachedBytes());
    }
    long dirs = 1;
    long files = 0;
    long bytes = 0;
    long cached = 0;
    try (CloseableIterator<FileInfo> it = fs.listStatus(root.getPath())) {
      while (it.hasNext()) {
        TreeTotals t = of(fs, it.next());
        dirs += t.directories;
        files += t.files;
        bytes += t.bytes;
        cached += t.cachedBytes;
      }
    }
    return new TreeTotals(dirs, files, bytes, cached);
  }
}
