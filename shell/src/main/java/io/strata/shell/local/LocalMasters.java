package io.strata.shell.local;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.shell.UsageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The masters {@code strata local up} runs on this host. One master is laid out as it always was:
 * the role {@code master}, the configured ports, its folders from the configuration (under {@code
 * ${strata.home}/master/} by default). Several masters (an odd number, at most {@value #MAX}) form
 * one journal group: {@code master-1} to {@code master-N}, master i on the configured gRPC, web and
 * journal ports plus {@value #PORT_STEP} times (i - 1), with its journal and metastore under {@code
 * ${strata.home}/master-i/}, each told every master's address; their backups go to {@code
 * ${strata.home}/backups/} unless {@code strata.master.backup.dir} is set. A restore backup, when
 * given, goes to every master.
 */
final class LocalMasters {
  static final int MAX = 7;
  static final int PORT_STEP = 10;
  private static final Pattern PID_FILE = Pattern.compile("master(-\\d+)?\\.pid");

  /** One master: how to run it, where it serves, and the settings only it gets. */
  record Member(
      LocalCluster.Role role,
      String address,
      String journalAddress,
      int webPort,
      Path journalDir,
      Map<String, String> properties) {}

  private final List<Member> members;

  private LocalMasters(List<Member> members) {
    this.members = List.copyOf(members);
  }

  /**
   * @param count how many masters; 1 or an odd number up to {@value #MAX}
   * @param restore an absolute backup folder every master restores from, or null
   */
  static LocalMasters of(StrataConfig conf, LocalCluster.Role base, int count, Path restore) {
    if (count < 1 || count > MAX || count % 2 == 0) {
      throw new UsageException(
          "--masters must be 1 or an odd number up to "
              + MAX
              + " (a"
              + " group of N masters keeps serving while a majority runs; 3 survive one failure),"
              + " not "
              + count);
    }
    String host = conf.getString(CommonKeys.MASTER_HOSTNAME);
    int rpc = conf.getInt(CommonKeys.MASTER_RPC_PORT);
    int web = conf.getInt(MasterKeys.WEB_PORT);
    int journal = conf.getInt(MasterKeys.JOURNAL_PORT);
    Map<String, String> restoreKey =
        restore == null ? Map.of() : Map.of(MasterKeys.RESTORE_BACKUP.name(), restore.toString());
    if (count == 1) {
      return new LocalMasters(
          List.of(
              new Member(
                  base,
                  host + ":" + rpc,
                  host + ":" + journal,
                  web,
                  Path.of(conf.getString(MasterKeys.JOURNAL_DIR)),
                  restoreKey)));
    }
    for (Map.Entry<String, Integer> port :
        Map.of(
                CommonKeys.MASTER_RPC_PORT.name(),
                rpc,
                MasterKeys.WEB_PORT.name(),
                web,
                MasterKeys.JOURNAL_PORT.name(),
                journal)
            .entrySet()) {
      int last = port.getValue() + PORT_STEP * (count - 1);
      if (port.getValue() <= 0 || last > 65535) {
        throw new UsageException(
            "--masters "
                + count
                + " puts master i on "
                + port.getKey()
                + " + "
                + PORT_STEP
                + " x (i - 1), which needs a fixed port from 1 to "
                + (65535 - PORT_STEP * (count - 1))
                + ", not "
                + port.getValue());
      }
    }
    List<String> addresses = new ArrayList<>();
    List<String> journals = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      addresses.add(host + ":" + (rpc + PORT_STEP * i));
      journals.add(host + ":" + (journal + PORT_STEP * i));
    }
    Path home = Path.of(conf.getString(CommonKeys.HOME));
    // Backups are written by whichever master leads: one folder for all of them, outside
    // any one master's folders, unless the configuration names one.
    String backups = conf.getString(MasterKeys.BACKUP_DIR);
    if (Path.of(backups).equals(home.resolve("master").resolve("backups"))) {
      backups = home.resolve("backups").toString();
    }
    List<Member> members = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String name = base.name() + "-" + (i + 1);
      Path dir = home.resolve(name);
      Map<String, String> p = new LinkedHashMap<>();
      p.put(CommonKeys.MASTER_HOSTNAME.name(), host);
      p.put(CommonKeys.MASTER_RPC_PORT.name(), Integer.toString(rpc + PORT_STEP * i));
      p.put(MasterKeys.WEB_PORT.name(), Integer.toString(web + PORT_STEP * i));
      p.put(MasterKeys.JOURNAL_PORT.name(), Integer.toString(journal + PORT_STEP * i));
      p.put(CommonKeys.MASTER_ADDRESSES.name(), String.join(",", addresses));
      p.put(MasterKeys.JOURNAL_ADDRESSES.name(), String.join(",", journals));
      p.put(MasterKeys.JOURNAL_DIR.name(), dir.resolve("journal").toString());
      p.put(MasterKeys.METASTORE_DIR.name(), dir.resolve("metastore").toString());
      p.put(MasterKeys.BACKUP_DIR.name(), backups);
      p.putAll(restoreKey);
      LocalCluster.Role role =
          new LocalCluster.Role(
              name,
              base.mainClass(),
              base.classpathVariable(),
              base.javaOptsVariable(),
              base.defaultJavaOpts());
      members.add(
          new Member(
              role,
              addresses.get(i),
              journals.get(i),
              web + PORT_STEP * i,
              dir.resolve("journal"),
              p));
    }
    return new LocalMasters(members);
  }

  /** How many masters the last {@code local up} started: the client file's list, else one. */
  static int lastCount(StrataConfig conf) {
    return Math.max(1, LocalClientConf.read(conf).size());
  }

  /** The roles of every master pid file in {@code runDir}, whichever layout wrote it. */
  static List<LocalCluster.Role> pidFileRoles(Path runDir, LocalCluster.Role base)
      throws IOException {
    List<LocalCluster.Role> roles = new ArrayList<>();
    if (!Files.isDirectory(runDir)) {
      return roles;
    }
    try (Stream<Path> files = Files.list(runDir)) {
      for (Path f : files.sorted().toList()) {
        String file = f.getFileName().toString();
        if (PID_FILE.matcher(file).matches()) {
          roles.add(
              new LocalCluster.Role(
                  file.substring(0, file.length() - ".pid".length()),
                  base.mainClass(),
                  base.classpathVariable(),
                  base.javaOptsVariable(),
                  base.defaultJavaOpts()));
        }
      }
    }
    return roles;
  }

  /** The member that runs as {@code role}. */
  Member member(LocalCluster.Role role) {
    for (Member m : members) {
      if (m.role().name().equals(role.name())) {
        return m;
      }
    }
    throw new IllegalArgumentException("no master " + role.name());
  }

  boolean several() {
    return members.size() > 1;
  }

  List<Member> members() {
    return members;
  }

  List<String> addresses() {
    return members.stream().map(Member::address).toList();
  }

  /** What the worker, the proxy and clients need to find the masters. */
  Map<String, String> clientProperties() {
    return several()
        ? Map.of(CommonKeys.MASTER_ADDRESSES.name(), String.join(",", addresses()))
        : Map.of();
  }

  /**
   * Whether a master's journal folder already holds state, in which case it starts from that and
   * ignores a restore backup.
   */
  static boolean holdsState(Path journalDir) throws IOException {
    Path raft = journalDir.resolve("raft");
    if (!Files.isDirectory(raft)) {
      return false;
    }
    try (Stream<Path> files = Files.walk(raft, 4)) {
      return files.anyMatch(
          f ->
              f.getFileName().toString().startsWith("log_")
                  || (f.getParent() != null
                      && f.getParent().getFileName().toString().equals("sm")));
    }
  }
}
