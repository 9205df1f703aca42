package io.strata.fuse;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.strata.client.FileSystem;
import io.strata.common.PathNames;
import io.strata.common.conf.ConfigException;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.server.common.ProcessMetricsRegistry;
import io.strata.server.common.WebServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mounts a Strata namespace directory in the foreground: {@code FuseMain MOUNTPOINT NAMESPACE_PATH
 * [-o opt[,opt...]]...}.
 *
 * <p>The client configuration is read with {@link StrataConfig#load()}, as the command line does.
 * Each {@code -o} value goes to libfuse as it is (e.g. {@code -o attr_timeout=1}), and {@code
 * attr_timeout}, {@code entry_timeout} and {@code max_read} come from the {@code strata.fuse.*}
 * keys when no {@code -o} gives them (see {@link MountOptions}). The process returns when the mount
 * goes away; SIGTERM or Ctrl-C unmounts first. Exit codes: 0 after a clean unmount, 1 when mounting
 * failed, 2 for bad arguments or configuration.
 */
public final class FuseMain {
  private static final Logger LOG = LoggerFactory.getLogger(FuseMain.class);
  static final Duration MOUNT_TIMEOUT = Duration.ofSeconds(30);

  private FuseMain() {}

  public static void main(String[] args) {
    io.strata.common.rpc.VersionHeaders.setProcessKind("fuse");
    System.exit(run(args));
  }

  static int run(String[] args) {
    List<String> options;
    try {
      options = fuseOptions(args);
    } catch (IllegalArgumentException e) {
      System.err.println("strata-fuse: " + e.getMessage());
      System.err.println("usage: FuseMain MOUNTPOINT NAMESPACE_PATH [-o opt[,opt...]]...");
      return 2;
    }
    Path mountPoint = Path.of(args[0]);
    String root;
    StrataConfig conf;
    try {
      root = PathNames.normalize(args[1]);
      conf = StrataConfig.load();
    } catch (ConfigException | StrataException e) {
      System.err.println("strata-fuse: " + e.getMessage());
      return 2;
    }
    LOG.info(
        "Strata FUSE mount starting (pid {}); native memory allocator: {}",
        ProcessHandle.current().pid(),
        allocator());
    PrometheusMeterRegistry registry = ProcessMetricsRegistry.create();
    FileSystem fs = FileSystem.connect(conf);
    StrataFuseFileSystem fileSystem;
    FuseMount mount;
    // Started before the mount, so that its start-up does not compete with the first requests.
    WebServer web = startWebServer(conf, registry);
    try {
      fileSystem =
          StrataFuseFileSystem.create(
              fs, root, conf, registry, mountPoint.toAbsolutePath().normalize().toString());
      fileSystem.warmUp();
      mount =
          FuseMount.mount(
              fileSystem,
              mountPoint,
              MountOptions.withDefaults(options, conf),
              conf.getInt(FuseKeys.UPCALL_THREADS),
              MOUNT_TIMEOUT);
    } catch (StrataException e) {
      fs.close();
      if (web != null) {
        web.close();
      }
      System.err.println("strata-fuse: " + e.getMessage());
      return 1;
    }
    Thread hook =
        new Thread(
            () -> {
              mount.close();
              fileSystem.shutdown();
              fs.close();
              if (web != null) {
                web.close();
              }
            },
            "strata-fuse-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    LOG.info("Serving {} of {} at {}", root, fs.masterAddress(), mount.mountPoint());
    try {
      mount.awaitUnmount();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  /** The metrics endpoint, or null when strata.fuse.web.port is -1 or the port is taken. */
  private static WebServer startWebServer(StrataConfig conf, PrometheusMeterRegistry registry) {
    int port = conf.getInt(FuseKeys.WEB_PORT);
    if (port < 0) {
      return null;
    }
    String host = conf.getString(FuseKeys.WEB_BIND_HOST);
    try {
      WebServer web = new WebServer(host, port, registry);
      LOG.info("Metrics at http://{}:{}/metrics", host, web.port());
      return web;
    } catch (IOException e) {
      // The mount is what matters to the jobs reading through it; serve on without metrics.
      LOG.warn(
          "Cannot serve metrics on {}:{} ({}); set strata.fuse.web.port to a free port," + " or -1",
          host,
          port,
          e.toString());
      return null;
    }
  }

  /** Which malloc serves native memory (libfuse, Netty): tcmalloc when the launcher preloads it. */
  static String allocator() {
    String preload = System.getenv("LD_PRELOAD");
    return preload != null && preload.contains("tcmalloc")
        ? "tcmalloc (" + preload + ")"
        : "the JVM's default (glibc malloc; tcmalloc not preloaded)";
  }

  /** The libfuse arguments from the ones after MOUNTPOINT and NAMESPACE_PATH. */
  static List<String> fuseOptions(String[] args) {
    if (args.length < 2) {
      throw new IllegalArgumentException("missing MOUNTPOINT or NAMESPACE_PATH");
    }
    List<String> out = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-o")) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("-o needs a value, e.g. -o attr_timeout=1");
        }
        out.add("-o");
        out.add(args[++i]);
      } else if (a.startsWith("-o") && a.length() > 2) {
        out.add("-o");
        out.add(a.substring(2));
      } else {
        throw new IllegalArgumentException("unknown argument " + a);
      }
    }
    return out;
  }
}
