package io.strata.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.Version;
import io.strata.common.conf.StrataConfig;
import io.strata.master.MasterServer;
import io.strata.shell.ShellRun.Result;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `fsadmin journal quorum info`, `fsadmin backup` and the checkpoints against a real master. */
class JournalCommandsTest {
  @TempDir Path dir;
  private MasterServer master;
  private String address;
  private final Map<String, String> conf = new HashMap<>();

  @BeforeEach
  void setUp() throws Exception {
    Files.createDirectories(dir.resolve("ufs"));
    int rpcPort = freePort();
    Map<String, String> m = new HashMap<>();
    m.put("strata.home", dir.resolve("master").toString());
    m.put("strata.master.rpc.port", Integer.toString(rpcPort));
    m.put("strata.master.web.port", "0");
    m.put("strata.master.journal.port", Integer.toString(freePort()));
    m.put("strata.master.root.ufs", "file://" + dir.resolve("ufs"));
    m.put("strata.master.rpc.threads", "4");
    master = new MasterServer(StrataConfig.load(m));
    master.start();
    address = "127.0.0.1:" + rpcPort;
    conf.put("strata.conf.dir", dir.resolve("conf").toString());
    conf.put("strata.master.hostname", "127.0.0.1");
    conf.put("strata.master.rpc.port", Integer.toString(rpcPort));
    conf.put("strata.client.master.retry.max.duration", "2s");
  }

  @AfterEach
  void tearDown() throws Exception {
    master.close();
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private Result run(String... args) {
    return ShellRun.run(conf, args);
  }

  @Test
  void quorumInfoShowsTheLoneMasterAsLeader() {
    run("fs", "mkdir", "/a");
    Result r = run("fsadmin", "journal", "quorum", "info");
    assertEquals(0, r.code(), r.err());
    List<String> lines = r.out().lines().toList();
    assertEquals(3, lines.size(), r.out());
    assertTrue(
        Pattern.matches(
            "Journal group [0-9a-f-]{36}: term \\d+, commit index \\d+,"
                + " leader "
                + Pattern.quote(address),
            lines.get(0)),
        lines.get(0));
    assertTrue(
        Pattern.matches("  ADDRESS +JOURNAL ADDRESS +ROLE +APPLIED +LAG", lines.get(1)),
        lines.get(1));
    Matcher row =
        Pattern.compile("  " + Pattern.quote(address) + " +127\\.0\\.0\\.1:\\d+ +leader +(\\d+) +0")
            .matcher(lines.get(2));
    assertTrue(row.matches(), lines.get(2));
    assertTrue(Long.parseLong(row.group(1)) > 0, "the mkdir was applied: " + lines.get(2));
  }

  @Test
  void quorumInfoListsAnUnreachableMasterAsARow() throws Exception {
    String down = "127.0.0.1:" + freePort();
    conf.put("strata.master.addresses", address + "," + down);
    Result r = run("fsadmin", "journal", "quorum", "info");
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains(" leader " + address), r.out());
    assertTrue(
        Pattern.compile("(?m)^  " + Pattern.quote(down) + " +- +unreachable +- +-$")
            .matcher(r.out())
            .find(),
        r.out());
    assertTrue(r.out().contains("Note: " + down + " is unreachable: connection refused"), r.out());
  }

  @Test
  void quorumInfoFailsNamingTheMastersWhenNoneAnswers() throws Exception {
    String down = "127.0.0.1:" + freePort();
    conf.put("strata.master.addresses", down);
    Result r = run("fsadmin", "journal", "quorum", "info");
    assertEquals(1, r.code(), r.out());
    assertTrue(
        r.err()
            .startsWith(
                "strata: No Strata master answered ("
                    + down
                    + " is unreachable: connection refused)"),
        r.err());
  }

  @Test
  void backupWritesAFolderWithAHeaderOnTheLeader() throws Exception {
    run("fs", "mkdir", "/data");
    Path to = dir.resolve("backups");
    Result r = run("fsadmin", "backup", "--to", to.toString());
    assertEquals(0, r.code(), r.err());
    List<String> lines = r.out().lines().toList();
    assertEquals(4, lines.size(), r.out());
    Matcher where =
        Pattern.compile(
                "Backup written to ("
                    + Pattern.quote(to.toString())
                    + "/backup-\\d{8}-\\d{6}-(\\d+))")
            .matcher(lines.get(0));
    assertTrue(where.matches(), lines.get(0));
    Path backup = Path.of(where.group(1));
    assertTrue(Files.isRegularFile(backup.resolve("HEADER")), "no HEADER in " + backup);
    assertTrue(Files.isDirectory(backup.resolve("db")), "no db/ in " + backup);
    assertEquals("  on the host of master " + address, lines.get(1));
    assertTrue(
        Pattern.matches(
            "  journal index " + where.group(2) + ", sequence \\d+, [2-9] inodes", lines.get(2)),
        lines.get(2));
    assertEquals(
        "Restore with: bin/strata master start --restore "
            + backup
            + " (on each master, with an empty journal folder)",
        lines.get(3));
  }

  @Test
  void backupRefusesARelativeFolder() {
    Result r = run("fsadmin", "backup", "--to", "backups");
    assertEquals(2, r.code());
    assertTrue(r.err().startsWith("strata: --to takes an absolute folder"), r.err());
  }

  @Test
  void checkpointWorksUnderJournalAndAtTheTop() {
    run("fs", "mkdir", "/c");
    Result nested = run("fsadmin", "journal", "checkpoint");
    assertEquals(0, nested.code(), nested.err());
    assertTrue(nested.out().startsWith("Checkpoint taken at journal sequence "), nested.out());
    Result top = run("fsadmin", "checkpoint");
    assertEquals(0, top.code(), top.err());
    assertTrue(top.out().startsWith("Checkpoint taken at journal sequence "), top.out());
  }

  @Test
  void electAndAddCheckTheirAddresses() {
    Result elect = run("fsadmin", "journal", "quorum", "elect", "nohost");
    assertEquals(2, elect.code());
    assertTrue(
        elect.err().startsWith("strata: The master to elect must be host:port"), elect.err());
    Result add = run("fsadmin", "journal", "quorum", "add", "m4:19200");
    assertEquals(2, add.code());
    assertTrue(add.err().contains("--journal-address"), add.err());
  }

  @Test
  void electOfTheLeaderKeepsIt() {
    Result r = run("fsadmin", "journal", "quorum", "elect", address);
    assertEquals(0, r.code(), r.err());
    assertEquals("The leader is now " + address + System.lineSeparator(), r.out());
  }

  @Test
  void upgradeStatusPrepareAndFinalizeOnANewCluster() {
    Result prepared = run("fsadmin", "upgrade", "prepare");
    assertEquals(0, prepared.code(), prepared.err());
    assertTrue(
        prepared
            .out()
            .contains(
                "Prepared the upgrade from release "
                    + Version.RELEASE
                    + " (metadata layout "
                    + Version.LAYOUT_VERSION
                    + ")"),
        prepared.out());
    assertTrue(prepared.out().contains("Backup written to "), prepared.out());

    Result status = run("fsadmin", "upgrade", "status");
    assertEquals(0, status.code(), status.err());
    assertTrue(status.out().contains("Releases running: " + Version.RELEASE + "\n"), status.out());
    assertTrue(status.out().contains(address + "  leader  " + Version.RELEASE), status.out());
    assertTrue(status.out().contains("Prepared: backup "), status.out());
    assertTrue(
        status
            .out()
            .contains("Finalized: layout " + Version.LAYOUT_VERSION + "; nothing to finalize."),
        status.out());

    Result finalized = run("fsadmin", "upgrade", "finalize");
    assertEquals(0, finalized.code(), finalized.err());
    assertTrue(finalized.out().contains("Already finalized"), finalized.out());

    Result relative = run("fsadmin", "upgrade", "prepare", "--to", "backups");
    assertEquals(2, relative.code(), relative.out());
    assertTrue(relative.err().contains("--to takes an absolute folder"), relative.err());
  }
}
