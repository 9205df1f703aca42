package io.strata.underfs.hdfs;

import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import java.io.IOException;
import java.util.Map;

/**
 * Provides {@link HdfsUnderFileSystem} for {@code hdfs://namenode:port/path} URIs, configured by
 * the mount options of {@link HdfsOptions}. Each call opens a store with its own Hadoop client;
 * {@link io.strata.underfs.UnderStores} shares one per namenode and set of options.
 */
public final class HdfsUnderFileSystemProvider implements UnderFileSystemProvider {
  @Override
  public String scheme() {
    return HdfsUnderFileSystem.SCHEME;
  }

  /**
   * @throws IllegalArgumentException for an unknown option, a bad value, a Kerberos option or a URI
   *     without a namenode; the message names it and lists the valid options
   */
  @Override
  public UnderFileSystem open(String uri, Map<String, String> options) throws IOException {
    return HdfsUnderFileSystem.open(uri, HdfsOptions.parse(options));
  }
}
