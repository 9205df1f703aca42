package io.strata.shell.local;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The client configuration that {@code strata local up --masters N} writes for later commands:
 * {@code ${strata.home}/run/client.properties}, holding {@code strata.master.addresses} of the
 * local masters. {@code local down} removes it, and a single-master {@code local up} too.
 *
 * <p>It completes a command's configuration only where that configuration is silent on the masters:
 * no {@code strata.master.addresses} of its own, and {@code
 * strata.master.hostname:strata.master.rpc.port} naming one of the local masters (the first one,
 * with the defaults). A command pointed at another master is left alone.
 */
public final class LocalClientConf {
  static final String FILE_NAME = "client.properties";

  private LocalClientConf() {}

  /** Where the file is for this configuration. */
  public static Path file(StrataConfig conf) {
    return Path.of(conf.getString(CommonKeys.HOME), "run", FILE_NAME);
  }

  /** Writes the master addresses of a local cluster, replacing the file atomically. */
  static void write(StrataConfig conf, List<String> addresses) throws IOException {
    Path file = file(conf);
    Files.createDirectories(file.getParent());
    String text =
        "# Written by `strata local up`, removed by `strata local down`: the local"
            + " masters, for\n# commands configured for the first of them. Do not edit.\n"
            + CommonKeys.MASTER_ADDRESSES.name()
            + "="
            + String.join(",", addresses)
            + "\n";
    Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  static void delete(StrataConfig conf) throws IOException {
    Files.deleteIfExists(file(conf));
  }

  /** The master addresses the file lists; empty when there is no file or it lists none. */
  static List<String> read(StrataConfig conf) {
    Path file = file(conf);
    if (!Files.isRegularFile(file)) {
      return List.of();
    }
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot read "
              + file
              + " (written by `strata local up`;"
              + " remove it if no local cluster runs)",
          e);
    }
    List<String> addresses = new ArrayList<>();
    for (String a : p.getProperty(CommonKeys.MASTER_ADDRESSES.name(), "").split(",")) {
      if (!a.isBlank()) {
        addresses.add(a.trim());
      }
    }
    return List.copyOf(addresses);
  }

  /**
   * The settings that point {@code conf} at every local master: {@code strata.master.addresses}
   * from the file when the class's conditions hold, else nothing.
   */
  public static Map<String, String> completion(StrataConfig conf) {
    if (!conf.getString(CommonKeys.MASTER_ADDRESSES).isBlank()) {
      return Map.of();
    }
    List<String> addresses = read(conf);
    String single =
        conf.getString(CommonKeys.MASTER_HOSTNAME) + ":" + conf.getInt(CommonKeys.MASTER_RPC_PORT);
    if (addresses.size() < 2 || !addresses.contains(single)) {
      return Map.of();
    }
    return Map.of(CommonKeys.MASTER_ADDRESSES.name(), String.join(",", addresses));
  }
}
