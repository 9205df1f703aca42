package io.strata.worker;

import io.strata.underfs.ForwardingUnderFileSystem;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.IOException;
import java.util.Map;

/**
 * A test under store over local folders, addressed as {@code rewriting:///abs/path}, that can run a
 * hook once when a read reaches a given position: a test rewrites the file there, as another
 * program would while a worker copies it.
 */
public final class RewritingUnderFileSystem extends ForwardingUnderFileSystem {
  /** Run once, then cleared, by the first read at or past {@link #hookPosition}. */
  static volatile Runnable onRead;

  static volatile long hookPosition;

  RewritingUnderFileSystem() {
    super(new LocalUnderFileSystem());
  }

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

  @Override
  protected String delegatePath(String uri) {
    return "file://" + uri.substring("rewriting://".length());
  }

  @Override
  public String scheme() {
    return "rewriting";
  }

  @Override
  public int read(String path, long position, byte[] buffer, int offset, int length)
      throws IOException {
    Runnable hook = onRead;
    if (hook != null && position >= hookPosition) {
      onRead = null;
      hook.run();
    }
    return super.read(path, position, buffer, offset, length);
  }
}
