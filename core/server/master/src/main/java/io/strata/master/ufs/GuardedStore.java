package io.strata.master.ufs;

import io.strata.underfs.UfsFileType;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * An under store whose every call the master makes goes through its mount's {@link StoreGuard}:
 * bounded in time, and refused at once while the store is taken as not answering. A listing's pages
 * are fetched through it too (each {@code hasNext}). Data calls (read, create, concat) are the
 * workers' and are passed on unguarded.
 */
final class GuardedStore implements UnderFileSystem {
  private final UnderFileSystem store;
  private final StoreGuard guard;

  GuardedStore(UnderFileSystem store, StoreGuard guard) {
    this.store = store;
    this.guard = guard;
  }

  @Override
  public String scheme() {
    return store.scheme();
  }

  @Override
  public UfsStatus getStatus(String path) throws IOException {
    return guard.call("stat", path, () -> store.getStatus(path));
  }

  @Override
  public UfsStatus getTargetStatus(String path) throws IOException {
    return guard.call("stat", path, () -> store.getTargetStatus(path));
  }

  @Override
  public String fingerprint(String path) throws IOException {
    return guard.call("stat", path, () -> store.fingerprint(path));
  }

  @Override
  public boolean exists(String path) throws IOException {
    return guard.call("stat", path, () -> store.exists(path));
  }

  @Override
  public CloseableIterator<UfsStatus> list(String path) throws IOException {
    CloseableIterator<UfsStatus> it = guard.call("list", path, () -> store.list(path));
    return new CloseableIterator<>() {
      @Override
      public boolean hasNext() {
        try {
          return guard.call(
              "list",
              path,
              () -> {
                try {
                  return it.hasNext();
                } catch (UncheckedIOException e) {
                  throw e.getCause();
                }
              });
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }

      @Override
      public UfsStatus next() {
        return it.next();
      }

      @Override
      public void close() throws IOException {
        it.close();
      }
    };
  }

  @Override
  public int read(String path, long position, byte[] buffer, int offset, int length)
      throws IOException {
    return store.read(path, position, buffer, offset, length);
  }

  @Override
  public UfsOutputStream create(String path, boolean overwrite, int mode) throws IOException {
    return store.create(path, overwrite, mode);
  }

  @Override
  public UfsStatus concat(List<String> sources, String target, boolean overwrite, int mode)
      throws IOException {
    return store.concat(sources, target, overwrite, mode);
  }

  @Override
  public void mkdirs(String path, boolean recursive) throws IOException {
    guard.call(
        "mkdir",
        path,
        () -> {
          store.mkdirs(path, recursive);
          return null;
        });
  }

  @Override
  public void delete(String path, boolean recursive) throws IOException {
    guard.call(
        "delete",
        path,
        () -> {
          store.delete(path, recursive);
          return null;
        });
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    guard.call(
        "rename",
        src,
        () -> {
          store.rename(src, dst);
          return null;
        });
  }

  @Override
  public void rename(String src, String dst, boolean replace) throws IOException {
    guard.call(
        "rename",
        src,
        () -> {
          store.rename(src, dst, replace);
          return null;
        });
  }

  @Override
  public void createSymlink(String path, String target) throws IOException {
    guard.call(
        "symlink",
        path,
        () -> {
          store.createSymlink(path, target);
          return null;
        });
  }

  @Override
  public void createSpecialFile(String path, UfsFileType type, int mode, long rdev)
      throws IOException {
    guard.call(
        "mknod",
        path,
        () -> {
          store.createSpecialFile(path, type, mode, rdev);
          return null;
        });
  }

  @Override
  public void createHardLink(String existingPath, String newPath) throws IOException {
    guard.call(
        "link",
        newPath,
        () -> {
          store.createHardLink(existingPath, newPath);
          return null;
        });
  }

  @Override
  public void relink(String existingPath, String linkPath) throws IOException {
    guard.call(
        "link",
        linkPath,
        () -> {
          store.relink(existingPath, linkPath);
          return null;
        });
  }

  @Override
  public boolean pathTooLong(String uri) {
    return store.pathTooLong(uri);
  }

  @Override
  public void close() throws IOException {
    // The store is shared and closed by its owner.
  }
}
