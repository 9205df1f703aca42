package io.strata.fuse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Translates between the user and group names the namespace stores and the numeric ids the kernel
 * speaks, from this machine's {@code /etc/passwd} and {@code /etc/group}.
 *
 * <p>Why files and not NSS: the JDK has no getpwnam, and the mount must answer getattr without a
 * native call per file. Users known only to a directory service (LDAP, SSSD) are therefore not
 * resolved: a name that is not in the files, and is not itself a number, is shown as owned by the
 * fallback id (the mounting user), and an id that is not in the files is stored as its decimal
 * string. The files are read at construction and again when a lookup misses, at most once per
 * {@link #RELOAD_INTERVAL_MS}, so users added later are picked up. Thread-safe.
 */
final class UserNames {
  private static final Logger LOG = LoggerFactory.getLogger(UserNames.class);
  static final long RELOAD_INTERVAL_MS = 60_000;

  private record Table(Map<String, Long> ids, Map<Long, String> names) {}

  private final Path passwd;
  private final Path group;
  private final long fallbackUid;
  private final long fallbackGid;
  private volatile Table users;
  private volatile Table groups;
  private volatile long loadedAtMs;

  UserNames(Path passwd, Path group, long fallbackUid, long fallbackGid) {
    this.passwd = passwd;
    this.group = group;
    this.fallbackUid = fallbackUid;
    this.fallbackGid = fallbackGid;
    reload();
  }

  /** The names of this machine, falling back to the given ids for unknown names. */
  static UserNames ofThisMachine(long fallbackUid, long fallbackGid) {
    return new UserNames(Path.of("/etc/passwd"), Path.of("/etc/group"), fallbackUid, fallbackGid);
  }

  long uid(String owner) {
    return id(owner, true);
  }

  long gid(String groupName) {
    return id(groupName, false);
  }

  String userName(long uid) {
    return name(uid, true);
  }

  String groupName(long gid) {
    return name(gid, false);
  }

  private long id(String name, boolean user) {
    long fallback = user ? fallbackUid : fallbackGid;
    if (name == null || name.isEmpty()) {
      return fallback;
    }
    Long id = (user ? users : groups).ids.get(name);
    if (id == null && reloadIfDue()) {
      id = (user ? users : groups).ids.get(name);
    }
    if (id != null) {
      return id;
    }
    try {
      return Long.parseLong(name);
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  private String name(long id, boolean user) {
    String name = (user ? users : groups).names.get(id);
    if (name == null && reloadIfDue()) {
      name = (user ? users : groups).names.get(id);
    }
    return name != null ? name : Long.toString(id);
  }

  private boolean reloadIfDue() {
    if (System.currentTimeMillis() - loadedAtMs < RELOAD_INTERVAL_MS) {
      return false;
    }
    reload();
    return true;
  }

  private synchronized void reload() {
    users = read(passwd);
    groups = read(group);
    loadedAtMs = System.currentTimeMillis();
  }

  /** Both files have the form {@code name:x:id:...}, one entry a line. */
  private static Table read(Path file) {
    Map<String, Long> ids = new HashMap<>();
    Map<Long, String> names = new HashMap<>();
    try {
      for (String line : Files.readAllLines(file)) {
        String[] f = line.split(":", 4);
        if (f.length < 3 || line.startsWith("#")) {
          continue;
        }
        try {
          long id = Long.parseLong(f[2]);
          ids.putIfAbsent(f[0], id);
          names.putIfAbsent(id, f[0]);
        } catch (NumberFormatException e) {
          // A malformed line names no id: skip it, as the C library does.
        }
      }
    } catch (IOException e) {
      LOG.warn("Cannot read {}: owners are shown as the mounting user ({})", file, e.toString());
    }
    return new Table(ids, names);
  }
}
