package io.strata.underfs;

import java.io.IOException;
import java.util.Map;

/**
 * Makes under stores of one URI scheme. Implementations are found with {@link
 * java.util.ServiceLoader}, so a store is selected by the scheme of its URI alone.
 */
public interface UnderFileSystemProvider {
  /** The scheme served, such as "file". */
  String scheme();

  /**
   * Opens the store that holds {@code uri}, configured by the mount's options.
   *
   * @throws IllegalArgumentException when an option is unknown or bad; the message names it
   */
  UnderFileSystem open(String uri, Map<String, String> options) throws IOException;
}
