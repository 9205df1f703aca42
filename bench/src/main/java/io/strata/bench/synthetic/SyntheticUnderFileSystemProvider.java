package io.strata.bench.synthetic;

import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import java.util.Map;

/**
 * Provides {@link SyntheticUnderFileSystem} for {@code synthetic://} URIs, found through {@link
 * java.util.ServiceLoader} by any Strata process that has the benchmark jar on its classpath (the
 * masters that the benchmarks start do). It takes no options.
 */
public final class SyntheticUnderFileSystemProvider implements UnderFileSystemProvider {
  @Override
  public String scheme() {
    return SyntheticUnderFileSystem.SCHEME;
  }

  @Override
  public UnderFileSystem open(String uri, Map<String, String> options) {
    if (!options.isEmpty()) {
      throw new IllegalArgumentException(
          "Synthetic under stores take no options, got " + options.keySet() + " for " + uri);
    }
    String prefix = SyntheticUnderFileSystem.SCHEME + "://";
    if (!uri.startsWith(prefix)) {
      throw new IllegalArgumentException(
          "Not a synthetic URI: "
              + uri
              + "; expected "
              + prefix
              + SyntheticTree.FORM.substring(0, SyntheticTree.FORM.indexOf(',')));
    }
    String rest = uri.substring(prefix.length());
    int slash = rest.indexOf('/');
    String authority = slash < 0 ? rest : rest.substring(0, slash);
    return new SyntheticUnderFileSystem(authority, SyntheticTree.parse(authority));
  }
}
