package io.strata.shell;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Preloads tcmalloc (Debian's gperftools) into the long-running processes the command line starts,
 * so that native memory freed by Netty, RocksDB and libfuse goes back to the system instead of
 * fragmenting glibc's arenas. {@code bin/strata} applies the same rule to servers started in the
 * foreground: {@code STRATA_TCMALLOC=0} turns it off.
 */
public final class Tcmalloc {
  /** Where Debian's libtcmalloc-minimal4 (installed by bin/setup) puts the library. */
  public static final String LIBRARY = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4";

  private Tcmalloc() {}

  /** Whether the library is installed and {@code STRATA_TCMALLOC=0} does not turn it off. */
  public static boolean applies(Map<String, String> env) {
    return !"0".equals(env.get("STRATA_TCMALLOC")) && Files.isReadable(Path.of(LIBRARY));
  }

  /**
   * Adds the library to the process's LD_PRELOAD when it is installed and not turned off.
   *
   * @param env the environment the command line runs in (for STRATA_TCMALLOC)
   */
  public static void preloadInto(ProcessBuilder pb, Map<String, String> env) {
    if (!applies(env)) {
      return;
    }
    String preload = pb.environment().get("LD_PRELOAD");
    pb.environment().put("LD_PRELOAD", LIBRARY + (preload == null ? "" : ":" + preload));
  }
}
