package io.strata.common.conf;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every configuration key Strata knows, collected from the per-scope key classes. It is the single
 * source for validation (unknown keys fail start-up) and for docs/configuration.md.
 */
public final class ConfigRegistry {
  /** The classes that declare keys; a new scope adds its class here. */
  private static final List<Class<?>> KEY_CLASSES =
      List.of(
          CommonKeys.class,
          MasterKeys.class,
          WorkerKeys.class,
          ClientKeys.class,
          FuseKeys.class,
          ProxyKeys.class);

  private static final Map<String, ConfigKey> KEYS = collect();

  private ConfigRegistry() {}

  private static Map<String, ConfigKey> collect() {
    Map<String, ConfigKey> keys = new TreeMap<>();
    for (Class<?> c : KEY_CLASSES) {
      for (Field f : c.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigKey.class) {
          try {
            ConfigKey key = (ConfigKey) f.get(null);
            if (keys.put(key.name(), key) != null) {
              throw new IllegalStateException("configuration key declared twice: " + key);
            }
          } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
          }
        }
      }
    }
    return Collections.unmodifiableMap(keys);
  }

  /** Returns the key of that name, or null. */
  public static ConfigKey find(String name) {
    return KEYS.get(name);
  }

  /** Whether the key of that name is declared in one of {@code keyClasses} (its scopes). */
  public static boolean declaredIn(String name, Class<?>... keyClasses) {
    ConfigKey key = KEYS.get(name);
    if (key == null) {
      return false;
    }
    for (Class<?> c : keyClasses) {
      for (Field f : c.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigKey.class) {
          try {
            if (f.get(null) == key) {
              return true;
            }
          } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
          }
        }
      }
    }
    return false;
  }

  /** All keys, sorted by name. */
  public static Collection<ConfigKey> all() {
    return KEYS.values();
  }

  /** The known key closest to a mistyped name, to suggest in an error. */
  static String closest(String name) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : KEYS.keySet()) {
      int d = editDistance(name, candidate);
      if (d < bestDistance) {
        bestDistance = d;
        best = candidate;
      }
    }
    return bestDistance <= Math.max(3, name.length() / 4) ? best : null;
  }

  private static int editDistance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
