package io.strata.underfs.local;

import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import java.util.Map;

/** Provides {@link LocalUnderFileSystem} for {@code file://} URIs. It takes no options. */
public final class LocalUnderFileSystemProvider implements UnderFileSystemProvider {
  @Override
  public String scheme() {
    return "file";
  }

  @Override
  public UnderFileSystem open(String uri, Map<String, String> options) {
    if (!options.isEmpty()) {
      throw new IllegalArgumentException(
          "Local under stores take no options, got " + options.keySet() + " for " + uri);
    }
    return new LocalUnderFileSystem();
  }
}
