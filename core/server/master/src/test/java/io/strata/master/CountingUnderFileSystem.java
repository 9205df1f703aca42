package io.strata.master;

import io.strata.underfs.ForwardingUnderFileSystem;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A test under store over local folders, addressed as {@code counting:///abs/path}: it counts the
 * metadata calls it serves, takes any options (and records them), and can run a hook when a listing
 * has returned its last entry, to race a sync with changes through Strata, and one after a rename.
 */
public final class CountingUnderFileSystem extends ForwardingUnderFileSystem {
  static final AtomicInteger STATUS_CALLS = new AtomicInteger();
  static final AtomicInteger LIST_CALLS = new AtomicInteger();
  static final CopyOnWriteArrayList<Map<String, String>> OPENED_WITH = new CopyOnWriteArrayList<>();

  /** Run once, then cleared, when a listing has returned its last entry. */
  static volatile Runnable afterListing;

  /**
   * Run with the destination's local path after each rename, to make it look like an object store's
   * copy (a new fingerprint for the same bytes).
   */
  static volatile Consumer<Path> afterRename;

  /** Listings of paths whose last name is this fail, as a store that cannot list them. */
  static final String UNLISTABLE = "unlistable";

  CountingUnderFileSystem() {
    super(new LocalUnderFileSystem());
  }

  /** Found through the service file in the test resources. */
  public static final class Provider implements UnderFileSystemProvider {
    @Override
    public String scheme() {
      return "counting";
    }

    @Override
    public UnderFileSystem open(String uri, Map<String, String> options) {
      OPENED_WITH.add(Map.copyOf(options));
      return new CountingUnderFileSystem();
    }
  }

  static void reset() {
    STATUS_CALLS.set(0);
    LIST_CALLS.set(0);
    afterListing = null;
    afterRename = null;
  }

  @Override
  protected String delegatePath(String uri) {
    return "file://" + uri.substring("counting://".length());
  }

  @Override
  public String scheme() {
    return "counting";
  }

  @Override
  public UfsStatus getStatus(String path) throws IOException {
    STATUS_CALLS.incrementAndGet();
    return super.getStatus(path);
  }

  @Override
  public boolean exists(String path) throws IOException {
    STATUS_CALLS.incrementAndGet();
    return super.exists(path);
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    super.rename(src, dst);
    Consumer<Path> hook = afterRename;
    if (hook != null) {
      hook.accept(Path.of(delegatePath(dst).substring("file://".length())));
    }
  }

  @Override
  public CloseableIterator<UfsStatus> list(String path) throws IOException {
    LIST_CALLS.incrementAndGet();
    if (path.endsWith("/" + UNLISTABLE)) {
      throw new IOException("Test store refuses to list " + path);
    }
    CloseableIterator<UfsStatus> it = super.list(path);
    return new CloseableIterator<>() {
      @Override
      public boolean hasNext() {
        boolean more = it.hasNext();
        Runnable hook = afterListing;
        if (!more && hook != null) {
          afterListing = null;
          hook.run();
        }
        return more;
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
}
