package io.strata.proxy.access;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The groups a user belongs to on this machine -- the primary group of {@code /etc/passwd} and
 * every group of {@code /etc/group} that lists the user -- as the namespace's group permission bits
 * need them. The JDK has no getgrouplist, and a check per request must not call out, so the files
 * are read at start and again at most once a minute when a user is not found; users known only to a
 * directory service belong to no group here. Thread-safe.
 */
public final class UserGroups {
  private static final Logger LOG = LoggerFactory.getLogger(UserGroups.class);
  static final long RELOAD_INTERVAL_MS = 60_000;

  private final Path passwd;
  private final Path group;
  private volatile Map<String, Set<String>> groupsByUser = Map.of();
  private volatile Map<String, String> primaryByUser = Map.of();
  private volatile long loadedAtMs;

  public UserGroups(Path passwd, Path group) {
    this.passwd = passwd;
    this.group = group;
    reload();
  }

  public static UserGroups ofThisMachine() {
    return new UserGroups(Path.of("/etc/passwd"), Path.of("/etc/group"));
  }

  /** The user's groups, its primary group among them; empty for an unknown user. */
  public Set<String> groupsOf(String user) {
    Set<String> g = groupsByUser.get(user);
    if (g == null && System.currentTimeMillis() - loadedAtMs >= RELOAD_INTERVAL_MS) {
      reload();
      g = groupsByUser.get(user);
    }
    return g == null ? Set.of() : g;
  }

  /** The user's primary group, or null for an unknown user. */
  public String primaryGroup(String user) {
    groupsOf(user);
    return primaryByUser.get(user);
  }

  private synchronized void reload() {
    Map<String, String> gidToName = new HashMap<>();
    Map<String, Set<String>> groups = new HashMap<>();
    for (String line : lines(group)) {
      String[] f = line.split(":", -1);
      if (f.length < 3 || line.startsWith("#")) {
        continue;
      }
      gidToName.putIfAbsent(f[2], f[0]);
      if (f.length >= 4 && !f[3].isEmpty()) {
        for (String member : f[3].split(",")) {
          groups.computeIfAbsent(member.trim(), k -> new HashSet<>()).add(f[0]);
        }
      }
    }
    Map<String, String> primary = new HashMap<>();
    for (String line : lines(passwd)) {
      String[] f = line.split(":", -1);
      if (f.length < 4 || line.startsWith("#")) {
        continue;
      }
      String name = gidToName.get(f[3]);
      if (name != null) {
        primary.putIfAbsent(f[0], name);
        groups.computeIfAbsent(f[0], k -> new HashSet<>()).add(name);
      } else {
        groups.computeIfAbsent(f[0], k -> new HashSet<>());
      }
    }
    Map<String, Set<String>> frozen = new HashMap<>();
    groups.forEach((user, set) -> frozen.put(user, Set.copyOf(set)));
    groupsByUser = Map.copyOf(frozen);
    primaryByUser = Map.copyOf(primary);
    loadedAtMs = System.currentTimeMillis();
  }

  private static Iterable<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      LOG.warn(
          "Cannot read {}: users belong to no group but their own name ({})", file, e.toString());
      return java.util.List.of();
    }
  }
}
