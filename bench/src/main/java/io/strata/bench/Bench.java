package io.strata.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/** Entry point of {@code bench/run}: picks a benchmark by name and passes its --options. */
public final class Bench {
  private Bench() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println(
          "usage: bench/run read|worker-restart|stores|buffer-pool|load|fuse|proxy|ha|upgrade|posix|cli|verify [--option value]...");
      System.exit(2);
    }
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 1; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        System.err.println("bench: options are --name value pairs, got " + args[i]);
        System.exit(2);
      }
      opts.put(args[i].substring(2), args[++i]);
    }
    switch (args[0]) {
      case "read" -> ReadBench.run(opts);
      case "worker-restart" -> WorkerRestartBench.run(opts);
      case "stores" -> UnderStoreBench.run(opts);
      case "buffer-pool" -> BufferPoolBench.run(opts);
      case "load" -> LoadBench.run(opts);
      case "fuse" -> FuseBench.run(opts);
      case "proxy" -> ProxyBench.run(opts);
      case "ha" -> HaBench.run(opts);
      case "upgrade" -> UpgradeBench.run(opts);
      case "posix" -> PosixWriteBench.run(opts);
      case "cli" -> CliBench.run(opts);
      case "verify" -> VerifyBench.run(opts);
      default -> {
        System.err.println(
            "bench: unknown benchmark "
                + args[0]
                + "; try read, worker-restart, stores, buffer-pool, load, fuse, proxy, ha, upgrade, posix, cli");
        System.exit(2);
      }
    }
  }

  /**
   * The {@code key=value,...} settings of an option such as {@code --fuse-conf} or {@code
   * --proxy-conf}, in order; a pair without a key is an error naming the option.
   */
  static Map<String, String> settings(String option, String value) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String pair : value.split(",")) {
      if (pair.isBlank()) {
        continue;
      }
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("--" + option + " takes key=value,...; got " + pair);
      }
      out.put(pair.substring(0, eq), pair.substring(eq + 1));
    }
    return out;
  }
}
