package io.strata.underfs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * An under store that forwards every call to another, after mapping its URIs with {@link
 * #delegatePath}. Subclasses override the calls they change: a store that counts calls, injects
 * faults, or serves one store's files under another scheme.
 */
public abstract class ForwardingUnderFileSystem implements UnderFileSystem {
  private final UnderFileSystem delegate;

  protected ForwardingUnderFileSystem(UnderFileSystem delegate) {
    this.delegate = delegate;
  }

  protected UnderFileSystem delegate() {
    return delegate;
  }

  /** The delegate's URI for one of this store's URIs; the same URI unless overridden. */
  protected String delegatePath(String uri) {
    return uri;
  }

  @Override
  public UfsStatus getStatus(String path) throws IOException {
    return delegate.getStatus(delegatePath(path));
  }

  @Override
  public UfsStatus getTargetStatus(String path) throws IOException {
    return delegate.getTargetStatus(delegatePath(path));
  }

  @Override
  public String fingerprint(String path) throws IOException {
    return delegate.fingerprint(delegatePath(path));
  }

  @Override
  public boolean exists(String path) throws IOException {
    return delegate.exists(delegatePath(path));
  }

  @Override
  public CloseableIterator<UfsStatus> list(String path) throws IOException {
    return delegate.list(delegatePath(path));
  }

  @Override
  public int read(String path, long position, byte[] buffer, int offset, int length)
      throws IOException {
    return delegate.read(delegatePath(path), position, buffer, offset, length);
  }

  @Override
  public int read(String path, long position, ByteBuffer dst) throws IOException {
    return delegate.read(delegatePath(path), position, dst);
  }

  @Override
  public UfsOutputStream create(String path, boolean overwrite, int mode) throws IOException {
    return delegate.create(delegatePath(path), overwrite, mode);
  }

  /** Forwarded whole, so that the delegate joins the files its own way. */
  @Override
  public UfsStatus concat(List<String> sources, String target, boolean overwrite, int mode)
      throws IOException {
    return delegate.concat(
        sources.stream().map(this::delegatePath).toList(), delegatePath(target), overwrite, mode);
  }

  @Override
  public void mkdirs(String path, boolean recursive) throws IOException {
    delegate.mkdirs(delegatePath(path), recursive);
  }

  @Override
  public void delete(String path, boolean recursive) throws IOException {
    delegate.delete(delegatePath(path), recursive);
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    delegate.rename(delegatePath(src), delegatePath(dst));
  }

  @Override
  public void rename(String src, String dst, boolean replace) throws IOException {
    delegate.rename(delegatePath(src), delegatePath(dst), replace);
  }

  /** The target is text kept as given, not a path of this store: it is not mapped. */
  @Override
  public void createSymlink(String path, String target) throws IOException {
    delegate.createSymlink(delegatePath(path), target);
  }

  @Override
  public void createSpecialFile(String path, UfsFileType type, int mode, long rdev)
      throws IOException {
    delegate.createSpecialFile(delegatePath(path), type, mode, rdev);
  }

  @Override
  public void createHardLink(String existingPath, String newPath) throws IOException {
    delegate.createHardLink(delegatePath(existingPath), delegatePath(newPath));
  }

  @Override
  public void relink(String existingPath, String linkPath) throws IOException {
    delegate.relink(delegatePath(existingPath), delegatePath(linkPath));
  }

  @Override
  public boolean pathTooLong(String path) {
    return delegate.pathTooLong(delegatePath(path));
  }

  @Override
  public void close() throws IOException {
    delegate.close();
  }
}
