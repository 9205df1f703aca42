package io.strata.bench.synthetic;

import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * A read-only under store whose tree is generated from its URI's authority ({@link SyntheticTree}),
 * nothing stored anywhere: for benchmarks of the master at namespace sizes that real files would
 * take too long to make or too many of the disk's inodes to hold. Statuses, listings and contents
 * are computed on each call and the same on every call and in every process: a fixed modification
 * time, a fingerprint from the file's size and number, and bytes that are a function of the file's
 * number and the offset. Listings are generated lazily, so a directory of millions is never held.
 * Every change (create, mkdirs, delete, rename, concat) fails with {@link AccessDeniedException}
 * saying the store is read-only. Thread-safe: it has no mutable state.
 */
public final class SyntheticUnderFileSystem implements UnderFileSystem {
  public static final String SCHEME = "synthetic";

  /** Modification time of every entry: 2023-11-14T22:13:20Z. */
  static final long MTIME_MS = 1_700_000_000_000L;

  private static final int DIR_MODE = 0755;
  private static final int FILE_MODE = 0644;

  private final String authority;
  private final SyntheticTree tree;
  private final int dirWidth;
  private final int fileWidth;

  SyntheticUnderFileSystem(String authority, SyntheticTree tree) {
    this.authority = authority;
    this.tree = tree;
    this.dirWidth = SyntheticTree.width(tree.directories() - 1);
    this.fileWidth = SyntheticTree.width(tree.fanout() - 1);
  }

  /** A path of the tree: the root (dir -1), a directory (file -1) or a file. */
  private record Node(long dir, long file) {
    boolean root() {
      return dir < 0;
    }

    boolean directory() {
      return file < 0;
    }
  }

  @Override
  public String scheme() {
    return SCHEME;
  }

  /** Resolves a URI of this store; NoSuchFileException naming it when the tree has no such path. */
  private Node node(String uri) throws IOException {
    String prefix = SCHEME + "://" + authority;
    if (!uri.startsWith(prefix)) {
      throw new NoSuchFileException(uri, null, "not in the synthetic store " + prefix);
    }
    List<String> names =
        java.util.Arrays.stream(uri.substring(prefix.length()).split("/"))
            .filter(s -> !s.isEmpty())
            .toList();
    if (names.isEmpty()) {
      return new Node(-1, -1);
    }
    long dir = SyntheticTree.index(names.get(0), 'd', dirWidth, tree.directories());
    if (dir < 0 || names.size() > 2) {
      throw new NoSuchFileException(uri);
    }
    if (names.size() == 1) {
      return new Node(dir, -1);
    }
    long file = SyntheticTree.index(names.get(1), 'f', fileWidth, tree.filesIn(dir));
    if (file < 0) {
      throw new NoSuchFileException(uri);
    }
    return new Node(dir, file);
  }

  private UfsStatus status(Node n) {
    if (n.root()) {
      return new UfsStatus("", true, 0, MTIME_MS, DIR_MODE, "", "", "synthetic-dir");
    }
    if (n.directory()) {
      return new UfsStatus(
          tree.directoryName(n.dir()), true, 0, MTIME_MS, DIR_MODE, "", "", "synthetic-dir");
    }
    return fileStatus(n.dir(), n.file());
  }

  private UfsStatus fileStatus(long dir, long file) {
    return new UfsStatus(
        tree.fileName(file),
        false,
        tree.fileSize(),
        MTIME_MS,
        FILE_MODE,
        "",
        "",
        "synthetic-" + tree.fileSize() + "-" + (dir * tree.fanout() + file));
  }

  @Override
  public UfsStatus getStatus(String path) throws IOException {
    return status(node(path));
  }

  @Override
  public boolean exists(String path) throws IOException {
    try {
      node(path);
      return true;
    } catch (NoSuchFileException e) {
      return false;
    }
  }

  @Override
  public CloseableIterator<UfsStatus> list(String path) throws IOException {
    Node n = node(path);
    if (!n.directory()) {
      throw new NotDirectoryException(path);
    }
    long count = n.root() ? tree.directories() : tree.filesIn(n.dir());
    return new CloseableIterator<>() {
      private long next;

      @Override
      public boolean hasNext() {
        return next < count;
      }

      @Override
      public UfsStatus next() {
        if (next >= count) {
          throw new NoSuchElementException();
        }
        long i = next++;
        return n.root() ? status(new Node(i, -1)) : fileStatus(n.dir(), i);
      }

      @Override
      public void close() {
        next = count;
      }
    };
  }

  @Override
  public int read(String path, long position, byte[] buffer, int offset, int length)
      throws IOException {
    Node n = node(path);
    if (n.directory()) {
      throw new IOException("Cannot read " + path + ": it is a directory");
    }
    if (position < 0) {
      throw new IllegalArgumentException("Negative position " + position + " reading " + path);
    }
    if (position >= tree.fileSize()) {
      return -1;
    }
    int count = (int) Math.min(length, tree.fileSize() - position);
    long seed = n.dir() * tree.fanout() + n.file();
    for (int k = 0; k < count; k++) {
      buffer[offset + k] = byteAt(seed, position + k);
    }
    return count;
  }

  /** The content: a byte of the file numbered {@code seed} at {@code position}. */
  static byte byteAt(long seed, long position) {
    long x = position * 0x9E3779B97F4A7C15L + seed;
    return (byte) (x ^ (x >>> 29));
  }

  @Override
  public UfsOutputStream create(String path, boolean overwrite, int mode) throws IOException {
    throw readOnly(path, "create a file");
  }

  @Override
  public UfsStatus concat(List<String> sources, String target, boolean overwrite, int mode)
      throws IOException {
    throw readOnly(target, "concatenate files into");
  }

  @Override
  public void mkdirs(String path, boolean recursive) throws IOException {
    throw readOnly(path, "create a directory");
  }

  @Override
  public void delete(String path, boolean recursive) throws IOException {
    throw readOnly(path, "delete");
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    throw readOnly(src, "rename (to " + dst + ")");
  }

  private static AccessDeniedException readOnly(String path, String what) {
    return new AccessDeniedException(
        path,
        null,
        "cannot "
            + what
            + ": a "
            + SCHEME
            + ":// under store is a tree generated by the benchmarks and read-only; mount it"
            + " read-only and write elsewhere");
  }

  @Override
  public void close() {
    // nothing held
  }
}
