package io.strata.fuse;

import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The libfuse arguments of a mount: the user's {@code -o} options as they are, plus the kernel
 * cache options ({@code attr_timeout}, {@code entry_timeout}, {@code max_read}) from the
 * configuration for each one the user did not give. Stateless.
 */
final class MountOptions {
  private MountOptions() {}

  /**
   * @param userArgs libfuse arguments as pairs {@code "-o", "a=1,b"}
   * @return {@code userArgs} followed by one {@code -o} with the missing cache options, if any
   */
  static List<String> withDefaults(List<String> userArgs, StrataConfig conf) {
    Set<String> given = new HashSet<>();
    for (int i = 0; i + 1 < userArgs.size(); i++) {
      if (userArgs.get(i).equals("-o")) {
        for (String opt : userArgs.get(i + 1).split(",")) {
          int eq = opt.indexOf('=');
          given.add((eq < 0 ? opt : opt.substring(0, eq)).trim());
        }
      }
    }
    List<String> added = new ArrayList<>();
    if (!given.contains("attr_timeout")) {
      added.add("attr_timeout=" + seconds(conf.getDuration(FuseKeys.ATTR_TIMEOUT).toMillis()));
    }
    if (!given.contains("entry_timeout")) {
      added.add("entry_timeout=" + seconds(conf.getDuration(FuseKeys.ENTRY_TIMEOUT).toMillis()));
    }
    long maxRead = conf.getBytes(FuseKeys.MAX_READ);
    if (!given.contains("max_read") && maxRead > 0) {
      added.add("max_read=" + maxRead);
    }
    List<String> out = new ArrayList<>(userArgs);
    if (!added.isEmpty()) {
      out.add("-o");
      out.add(String.join(",", added));
    }
    return out;
  }

  /** libfuse takes the timeouts as (fractional) seconds. */
  private static String seconds(long ms) {
    return ms % 1000 == 0 ? Long.toString(ms / 1000) : Double.toString(ms / 1000.0);
  }
}
