package io.strata.common.conf;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An immutable, validated set of configuration values.
 *
 * <p>Sources, lowest precedence first: key defaults; {@code strata-site.properties} in the
 * configuration folder; environment variables ({@code strata.worker.rpc.port} is overridden by
 * {@code STRATA_WORKER_RPC_PORT}); Java system properties ({@code -Dstrata.worker.rpc.port=...});
 * explicit overrides given by the caller. Any {@code strata.*} name in the file, the system
 * properties or the overrides that is not a known key, and any value that does not parse as its
 * key's type, fails loading with a {@link ConfigException} that names the key.
 *
 * <p>Values may reference other keys and the Java system properties {@code user.home} and {@code
 * user.name} as {@code ${name}}.
 */
public final class StrataConfig {
  public static final String SITE_FILE = "strata-site.properties";

  private final Map<String, String> raw;
  private final Map<String, Object> parsed = new ConcurrentHashMap<>();

  private StrataConfig(Map<String, String> raw) {
    this.raw = raw;
    for (ConfigKey key : ConfigRegistry.all()) {
      parsed.put(key.name(), parse(key, resolve(key.name())));
    }
  }

  /** Loads from every source, with the given overrides on top. */
  public static StrataConfig load(Map<String, String> overrides) {
    return load(overrides, System.getenv(), System.getProperties());
  }

  /** Loads from every source with no overrides. */
  public static StrataConfig load() {
    return load(Map.of());
  }

  static StrataConfig load(
      Map<String, String> overrides, Map<String, String> env, Properties sysProps) {
    Map<String, String> values = new HashMap<>();
    for (ConfigKey key : ConfigRegistry.all()) {
      values.put(key.name(), key.defaultValue());
    }
    // The site file's location can itself come from env, -D or overrides.
    Map<String, String> early = new HashMap<>(values);
    applyEnv(early, env);
    applyNamed(early, sysProps, "system property");
    early.putAll(overrides);
    Path site = Path.of(new StrataConfig(early).getString(CommonKeys.CONF_DIR), SITE_FILE);
    if (Files.isRegularFile(site)) {
      Properties file = new Properties();
      try (InputStream in = Files.newInputStream(site)) {
        file.load(in);
      } catch (IOException e) {
        throw new ConfigException("Cannot read " + site + ": " + e.getMessage());
      }
      applyNamed(values, file, site.toString());
    }
    applyEnv(values, env);
    applyNamed(values, sysProps, "system property");
    for (Map.Entry<String, String> e : overrides.entrySet()) {
      requireKnown(e.getKey(), "override");
      values.put(e.getKey(), e.getValue());
    }
    return new StrataConfig(values);
  }

  private static void applyEnv(Map<String, String> values, Map<String, String> env) {
    for (ConfigKey key : ConfigRegistry.all()) {
      String v = env.get(key.envName());
      if (v != null) {
        values.put(key.name(), v);
      }
    }
  }

  private static void applyNamed(Map<String, String> values, Properties props, String source) {
    for (String name : props.stringPropertyNames()) {
      if (name.startsWith("strata.")) {
        requireKnown(name, source);
        values.put(name, props.getProperty(name));
      }
    }
  }

  private static void requireKnown(String name, String source) {
    if (ConfigRegistry.find(name) == null) {
      String hint = ConfigRegistry.closest(name);
      throw new ConfigException(
          "Unknown configuration key '"
              + name
              + "' (from "
              + source
              + ")."
              + (hint != null ? " Did you mean '" + hint + "'?" : "")
              + " See docs/configuration.md for the keys Strata knows.");
    }
  }

  /** A copy with some values replaced; the new values are validated like any other. */
  public StrataConfig with(Map<String, String> overrides) {
    Map<String, String> values = new HashMap<>(raw);
    for (Map.Entry<String, String> e : overrides.entrySet()) {
      requireKnown(e.getKey(), "override");
      values.put(e.getKey(), e.getValue());
    }
    return new StrataConfig(values);
  }

  private String resolve(String name) {
    return substitute(raw.get(name), 0);
  }

  private String substitute(String value, int depth) {
    if (depth > 16) {
      throw new ConfigException("Configuration references nest too deep in '" + value + "'");
    }
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i < value.length()) {
      int start = value.indexOf("${", i);
      if (start < 0) {
        out.append(value, i, value.length());
        break;
      }
      int end = value.indexOf('}', start);
      if (end < 0) {
        throw new ConfigException("Unclosed ${ in configuration value '" + value + "'");
      }
      out.append(value, i, start);
      String ref = value.substring(start + 2, end);
      String refValue = raw.get(ref);
      if (refValue == null && (ref.equals("user.home") || ref.equals("user.name"))) {
        refValue = System.getProperty(ref);
      }
      if (refValue == null) {
        throw new ConfigException(
            "Configuration value '" + value + "' references unknown '" + ref + "'");
      }
      out.append(substitute(refValue, depth + 1));
      i = end + 1;
    }
    return out.toString();
  }

  private static Object parse(ConfigKey key, String value) {
    try {
      return key.type().parse(value);
    } catch (RuntimeException e) {
      throw new ConfigException(
          "Bad value '"
              + value
              + "' for configuration key '"
              + key.name()
              + "': expected a "
              + key.type().expected()
              + " ("
              + e.getMessage()
              + ").");
    }
  }

  private Object value(ConfigKey key, ConfigType type) {
    if (key.type() != type) {
      throw new IllegalArgumentException(key + " is " + key.type() + ", not " + type);
    }
    Object v = parsed.get(key.name());
    if (v == null) {
      throw new IllegalArgumentException("key not registered in ConfigRegistry: " + key);
    }
    return v;
  }

  public String getString(ConfigKey key) {
    return (String) value(key, ConfigType.STRING);
  }

  public int getInt(ConfigKey key) {
    return (Integer) value(key, ConfigType.INT);
  }

  public long getLong(ConfigKey key) {
    return (Long) value(key, ConfigType.LONG);
  }

  public boolean getBoolean(ConfigKey key) {
    return (Boolean) value(key, ConfigType.BOOLEAN);
  }

  public long getBytes(ConfigKey key) {
    return (Long) value(key, ConfigType.BYTES);
  }

  public Duration getDuration(ConfigKey key) {
    return (Duration) value(key, ConfigType.DURATION);
  }

  /**
   * The values as {@code -Dname=value} text, so a launcher can hand its configuration to a child
   * process.
   */
  public Map<String, String> rawValues() {
    return Collections.unmodifiableMap(raw);
  }
}
