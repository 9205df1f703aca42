package io.strata.fuse;

import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The libfuse arguments of a mount: the user's {@code -o} options as they are, plus the kernel
 * cache options ({@code attr_timeout}, {@code entry_timeout}, {@code max_read}) from the
 * configuration for each one the user did not give, plus the options the mount's semantics rely on:
 * {@code default_permissions} (the kernel checks every access against the owner, group and mode the
 * mount reports, with the calling process's uid and gid), {@code big_writes} (writes arrive in
 * pieces of up to 128 KiB rather than 4 KiB), {@code use_ino} (stat shows the namespace's stable
 * inode numbers, shared by a file's hard links), {@code atomic_o_trunc} (an open with O_TRUNC
 * arrives as one open, not a truncate and an open, so the file is not written through empty first)
 * and, when {@code strata.fuse.allow.other} is on and this process may, {@code allow_other} (other
 * users reach the mount at all, subject to those checks). Stateless.
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
    for (String always :
        List.of("default_permissions", "big_writes", "use_ino", "atomic_o_trunc")) {
      if (!given.contains(always)) {
        added.add(always);
      }
    }
    if (!given.contains("allow_other")
        && conf.getBoolean(FuseKeys.ALLOW_OTHER)
        && allowOtherPermitted(
            Path.of("/etc/fuse.conf"), new com.sun.security.auth.module.UnixSystem().getUid())) {
      added.add("allow_other");
    }
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

  /**
   * Whether fusermount lets this process use {@code allow_other}: root always may; another user
   * only when {@code user_allow_other} is set in {@code fuseConf}.
   */
  static boolean allowOtherPermitted(Path fuseConf, long uid) {
    if (uid == 0) {
      return true;
    }
    try {
      return Files.readAllLines(fuseConf).stream()
          .map(String::trim)
          .anyMatch(l -> l.equals("user_allow_other"));
    } catch (IOException e) {
      return false;
    }
  }

  /** libfuse takes the timeouts as (fractional) seconds. */
  private static String seconds(long ms) {
    return ms % 1000 == 0 ? Long.toString(ms / 1000) : Double.toString(ms / 1000.0);
  }
}
