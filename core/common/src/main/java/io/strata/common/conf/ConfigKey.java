package io.strata.common.conf;

import java.util.Locale;
import java.util.Objects;

/**
 * One configuration key: its name, type, default, unit and one sentence of documentation. Keys are
 * declared as constants in the per-scope classes ({@link CommonKeys}, {@link MasterKeys}, {@link
 * WorkerKeys}, {@link ClientKeys}) and collected by {@link ConfigRegistry}. A default may reference
 * other keys as {@code ${strata.home}}.
 */
public final class ConfigKey {
  private final String name;
  private final ConfigType type;
  private final String defaultValue;
  private final String unit;
  private final String description;

  private ConfigKey(
      String name, ConfigType type, String defaultValue, String unit, String description) {
    this.name = Objects.requireNonNull(name);
    this.type = Objects.requireNonNull(type);
    this.defaultValue = Objects.requireNonNull(defaultValue);
    this.unit = unit;
    this.description = Objects.requireNonNull(description);
    if (!name.equals(name.toLowerCase(Locale.ROOT)) || !name.startsWith("strata.")) {
      throw new IllegalArgumentException("key names are lower-case under strata.: " + name);
    }
  }

  public static ConfigKey string(String name, String defaultValue, String description) {
    return new ConfigKey(name, ConfigType.STRING, defaultValue, "", description);
  }

  public static ConfigKey integer(String name, int defaultValue, String unit, String description) {
    return new ConfigKey(name, ConfigType.INT, Integer.toString(defaultValue), unit, description);
  }

  public static ConfigKey longKey(String name, long defaultValue, String unit, String description) {
    return new ConfigKey(name, ConfigType.LONG, Long.toString(defaultValue), unit, description);
  }

  public static ConfigKey bool(String name, boolean defaultValue, String description) {
    return new ConfigKey(name, ConfigType.BOOLEAN, Boolean.toString(defaultValue), "", description);
  }

  public static ConfigKey bytes(String name, String defaultValue, String description) {
    ConfigType.parseBytes(defaultValue);
    return new ConfigKey(name, ConfigType.BYTES, defaultValue, "bytes", description);
  }

  public static ConfigKey duration(String name, String defaultValue, String description) {
    ConfigType.parseDuration(defaultValue);
    return new ConfigKey(name, ConfigType.DURATION, defaultValue, "duration", description);
  }

  public String name() {
    return name;
  }

  public ConfigType type() {
    return type;
  }

  public String defaultValue() {
    return defaultValue;
  }

  public String unit() {
    return unit;
  }

  public String description() {
    return description;
  }

  /** The environment variable that overrides this key: upper case, dots become underscores. */
  public String envName() {
    return name.toUpperCase(Locale.ROOT).replace('.', '_');
  }

  @Override
  public String toString() {
    return name;
  }
}
