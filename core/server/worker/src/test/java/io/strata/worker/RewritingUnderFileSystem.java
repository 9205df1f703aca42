package io.strata.worker;

import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.IOException;
import java.util.Map;

/**
 * A test under store over local folders, addressed as {@code rewriting:///abs/path}, that can
 * run a hook once when a read reaches a given position: a test rewrites the file there, as
 * another program would while a worker copies it.
 */
public final class RewritingUnderFileSystem implements UnderFileSystem {
  /** Run once, then cleared, by the first read at or past {@link #hookPosition}. */
  static volatile Runnable onRead;
  static volatile long hookPosition;

  private final LocalUnderFileSystem local = new LocalUnderFileSystem();

  /** Found through the service file in the test resources. */
  public static final class Provider implements UnderFileSystemProvider {
    @Override
    public String scheme() {
      return "rewriting";
    }

    @Override
    public UnderFileSystem open(String uri, Map<String, String> options) {
      return new RewritingUnderFileSystem();
    }
  }

  private static String local(String uri) {
    return "file://" + uri.substring("rewriting://".length());
  }

  @Override
  public String scheme() {
    return "rewriting";
  }

  @Override
  public UfsStatus getStatus(String path) throws IOException {
    return local.getStatus(local(path));
  }

  @Override
  public boolean exists(String path) throws IOException {
    return local.exists(local(path));
  }

  @Override
  public CloseableIterator<UfsStatus> list(String path) throws IOException {
    return local.list(local(path));
  }

  @Override
  public int read(String path, long position, byte[] buffer, int offset, int length)
      throws IOException {
    Runnable hook = onRead;
    if (hook != null && position >= hookPosition) {
      onRead = null;
      hook.run();
    }
    return local.read(local(path), position, buffer, offset, length);
  }

  @Override
  public UfsOutputStream create(String path, boolean overwrite, int mode) throws IOException {
    return local.create(local(path), overwrite, mode);
  }

  @Override
  public void mkdirs(String path, boolean recursive) throws IOException {
    local.mkdirs(local(path), recursive);
  }

  @Override
  public void delete(String path, boolean recursive) throws IOException {
    local.delete(local(path), recursive);
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    local.rename(local(src), local(dst));
  }

  @Override
  public void close() {}
}
