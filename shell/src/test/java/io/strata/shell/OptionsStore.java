package io.strata.shell;

import io.strata.underfs.ForwardingUnderFileSystem;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.util.Map;

/**
 * A test under store over local folders, addressed as {@code options:///abs/path}, that takes any
 * mount options (credentials included), as remote stores do.
 */
public final class OptionsStore extends ForwardingUnderFileSystem {
  OptionsStore() {
    super(new LocalUnderFileSystem());
  }

  /** Found through the service file in the test resources. */
  public static final class Provider implements UnderFileSystemProvider {
    @Override
    public String scheme() {
      return "options";
    }

    @Override
    public UnderFileSystem open(String uri, Map<String, String> options) {
      return new OptionsStore();
    }
  }

  @Override
  protected String delegatePath(String uri) {
    return "file://" + uri.substring("options://".length());
  }

  @Override
  public String scheme() {
    return "options";
  }
}
