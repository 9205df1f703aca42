package io.strata.underfs.hdfs;

import java.io.IOException;
import java.io.InputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * The mount options of an HDFS under store, each with its default and one sentence of docs, and the
 * Hadoop client configuration they stand for. Parsing is strict: an unknown option, a bad value or
 * a reserved Kerberos option fails with an {@link IllegalArgumentException} that names it and lists
 * the valid options, so a mistake in {@code strata fs mount --option} is caught when the mount is
 * made, not at the first read.
 *
 * <p>Precedence in the resulting configuration, lowest first: Hadoop's built-in defaults and any
 * {@code core-site.xml} on the classpath, {@link #CLIENT_DEFAULTS}, the files of {@code
 * hdfs.config.files} in order, then {@code hdfs.conf.*}. A key of {@link #CLIENT_DEFAULTS} set by a
 * config file or by {@code hdfs.conf.*} keeps that value.
 */
public final class HdfsOptions {
  /** One mount option: its name, its default ("" when unset) and what it does. */
  public record Option(String name, String defaultValue, String description) {}

  public static final String CONFIG_FILES = "hdfs.config.files";

  /** Prefix of options passed through into the Hadoop configuration without the prefix. */
  public static final String CONF_PREFIX = "hdfs.conf.";

  public static final String USER = "hdfs.user";
  public static final String KERBEROS_PRINCIPAL = "hdfs.kerberos.principal";
  public static final String KERBEROS_KEYTAB = "hdfs.kerberos.keytab";

  /**
   * Hadoop client settings Strata uses instead of Hadoop's own defaults. Hadoop retries a namenode
   * that times out 45 times 20 s apart; these make an unreachable namenode fail within about 15 s
   * (3 connection attempts of at most 5 s) and bound HA fail-over to 4 attempts.
   */
  static final Map<String, String> CLIENT_DEFAULTS;

  private static final String AUTHENTICATION_KEY = "hadoop.security.authentication";
  private static final Map<String, Option> ALL = new LinkedHashMap<>();

  static {
    Map<String, String> defaults = new LinkedHashMap<>();
    defaults.put("ipc.client.connect.timeout", "5000");
    defaults.put("ipc.client.connect.max.retries.on.timeouts", "2");
    defaults.put("ipc.client.connect.max.retries", "2");
    defaults.put("ipc.client.connect.retry.interval", "1000");
    defaults.put("dfs.client.failover.max.attempts", "4");
    defaults.put("dfs.client.failover.sleep.max.millis", "4000");
    CLIENT_DEFAULTS = Collections.unmodifiableMap(defaults);

    add(
        CONFIG_FILES,
        "",
        "Comma-separated absolute paths of Hadoop XML files (core-site.xml, "
            + "hdfs-site.xml) loaded for this mount only, later files winning.");
    add(
        CONF_PREFIX + "<key>",
        "",
        "Sets the Hadoop client property <key> for this mount, over "
            + "the config files, e.g. hdfs.conf.dfs.client.use.datanode.hostname=true.");
    add(
        USER,
        "",
        "The HDFS user the mount acts as (simple authentication); empty means the "
            + "user of the Strata process.");
    add(
        KERBEROS_PRINCIPAL,
        "",
        "Reserved: the Kerberos principal to log in as; Kerberos is "
            + "not supported yet, so giving it fails the mount.");
    add(
        KERBEROS_KEYTAB,
        "",
        "Reserved: the keytab of hdfs.kerberos.principal; Kerberos is "
            + "not supported yet, so giving it fails the mount.");
  }

  private static void add(String name, String defaultValue, String description) {
    ALL.put(name, new Option(name, defaultValue, description));
  }

  private final List<Path> configFiles;
  private final Map<String, String> hadoopSettings;
  private final String user;

  private HdfsOptions(List<Path> configFiles, Map<String, String> hadoopSettings, String user) {
    this.configFiles = List.copyOf(configFiles);
    this.hadoopSettings = Collections.unmodifiableMap(new LinkedHashMap<>(hadoopSettings));
    this.user = user;
  }

  /**
   * Parses mount options; absent ones take their defaults. Config files are read here, so a missing
   * or malformed file fails the mount.
   *
   * @throws IllegalArgumentException naming an unknown option, a bad value or a reserved Kerberos
   *     option, and listing the valid options
   */
  public static HdfsOptions parse(Map<String, String> options) {
    List<Path> files = new ArrayList<>();
    Map<String, String> settings = new LinkedHashMap<>();
    String user = "";
    for (Map.Entry<String, String> e : options.entrySet()) {
      String name = e.getKey();
      String value = e.getValue() == null ? "" : e.getValue();
      if (name.equals(KERBEROS_PRINCIPAL) || name.equals(KERBEROS_KEYTAB)) {
        throw new IllegalArgumentException(
            "Kerberos is not supported yet: HDFS mount option "
                + name
                + " cannot be used. Mount an HDFS that uses simple authentication, and "
                + "choose the user with "
                + USER
                + "; valid options: "
                + validNames());
      } else if (name.equals(CONFIG_FILES)) {
        files.addAll(parseFiles(value));
      } else if (name.equals(USER)) {
        user = parseUser(value);
      } else if (name.startsWith(CONF_PREFIX) && name.length() > CONF_PREFIX.length()) {
        settings.put(name.substring(CONF_PREFIX.length()), value);
      } else {
        throw new IllegalArgumentException(
            "Unknown HDFS mount option '" + name + "'; valid options: " + validNames());
      }
    }
    HdfsOptions parsed = new HdfsOptions(files, settings, user);
    parsed.rejectKerberos(parsed.toConfiguration());
    return parsed;
  }

  /** Every option in documentation order; {@code hdfs.conf.<key>} stands for the prefix. */
  public static Collection<Option> all() {
    return Collections.unmodifiableCollection(ALL.values());
  }

  private static String validNames() {
    return String.join(", ", ALL.keySet());
  }

  private static IllegalArgumentException bad(String name, String text, String expected) {
    return new IllegalArgumentException(
        "Bad value '"
            + text
            + "' for HDFS mount option "
            + name
            + ": "
            + expected
            + "; valid options: "
            + validNames());
  }

  private static List<Path> parseFiles(String text) {
    List<Path> files = new ArrayList<>();
    for (String piece : text.split(",")) {
      String name = piece.trim();
      if (name.isEmpty()) {
        continue;
      }
      Path file = Path.of(name);
      if (!file.isAbsolute()) {
        throw bad(
            CONFIG_FILES,
            text,
            "'"
                + name
                + "' is not an absolute path; expected "
                + "files such as /etc/hadoop/conf/core-site.xml,/etc/hadoop/conf/hdfs-site.xml");
      }
      if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
        throw bad(CONFIG_FILES, text, "'" + name + "' is not a readable file on this machine");
      }
      checkParses(file, text);
      files.add(file);
    }
    return files;
  }

  /** Loads one file alone so that a malformed one is named, not reported at first use. */
  private static void checkParses(Path file, String text) {
    Configuration alone = new Configuration(false);
    try (InputStream in = Files.newInputStream(file)) {
      alone.addResource(in, file.toString());
      alone.size();
    } catch (IOException | RuntimeException e) {
      throw bad(
          CONFIG_FILES,
          text,
          "'" + file + "' is not a Hadoop configuration file (" + e.getMessage() + ")");
    }
  }

  private static String parseUser(String text) {
    String name = text.trim();
    if (name.isEmpty() || name.chars().anyMatch(Character::isWhitespace)) {
      throw bad(USER, text, "expected an HDFS user name such as alice");
    }
    return name;
  }

  private static URL toUrl(Path file) {
    try {
      return file.toUri().toURL();
    } catch (MalformedURLException e) {
      throw bad(CONFIG_FILES, file.toString(), "not a usable file path");
    }
  }

  /** Builds a fresh Hadoop configuration for one mount; see the class comment for precedence. */
  Configuration toConfiguration() {
    Configuration conf = new Configuration();
    Configuration fromFiles = new Configuration(false);
    for (Path file : configFiles) {
      URL url = toUrl(file);
      conf.addResource(url);
      fromFiles.addResource(url);
    }
    for (Map.Entry<String, String> e : CLIENT_DEFAULTS.entrySet()) {
      if (fromFiles.get(e.getKey()) == null && !hadoopSettings.containsKey(e.getKey())) {
        conf.set(e.getKey(), e.getValue(), "Strata HDFS client default");
      }
    }
    for (Map.Entry<String, String> e : hadoopSettings.entrySet()) {
      conf.set(e.getKey(), e.getValue(), "HDFS mount option " + CONF_PREFIX + e.getKey());
    }
    return conf;
  }

  private void rejectKerberos(Configuration conf) {
    String auth = conf.getTrimmed(AUTHENTICATION_KEY, "simple").toLowerCase(Locale.ROOT);
    if (!auth.equals("simple")) {
      String[] sources = conf.getPropertySources(AUTHENTICATION_KEY);
      throw new IllegalArgumentException(
          "Kerberos is not supported yet: "
              + AUTHENTICATION_KEY
              + " is '"
              + auth
              + "'"
              + (sources == null ? "" : " (set by " + String.join(", ", sources) + ")")
              + ". Mount an HDFS that uses simple authentication; valid options: "
              + validNames());
    }
  }

  /** The config files in load order. */
  public List<Path> configFiles() {
    return configFiles;
  }

  /** The {@code hdfs.conf.*} settings, keyed by Hadoop property name. */
  public Map<String, String> hadoopSettings() {
    return hadoopSettings;
  }

  /** The user to act as, or "" for the user of the process. */
  public String user() {
    return user;
  }

  @Override
  public String toString() {
    return "HdfsOptions{configFiles="
        + configFiles
        + ", hadoopSettings="
        + hadoopSettings
        + ", user="
        + (user.isEmpty() ? "<process user>" : user)
        + "}";
  }
}
