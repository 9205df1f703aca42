package io.strata.common.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StrataConfigTest {
  @TempDir Path dir;

  private StrataConfig load(
      Map<String, String> overrides, Map<String, String> env, Properties sys) {
    Properties p = new Properties();
    p.putAll(sys);
    p.setProperty("strata.conf.dir", dir.toString());
    return StrataConfig.load(overrides, env, p);
  }

  @Test
  void defaultsApplyAndReferencesResolve() {
    StrataConfig c = load(Map.of("strata.home", "/srv/strata"), Map.of(), new Properties());
    assertEquals(19200, c.getInt(CommonKeys.MASTER_RPC_PORT));
    assertEquals("/srv/strata/master/journal", c.getString(MasterKeys.JOURNAL_DIR));
    assertEquals(64L << 20, c.getBytes(MasterKeys.BLOCK_SIZE));
    assertEquals(Duration.ofSeconds(30), c.getDuration(MasterKeys.WORKER_TIMEOUT));
  }

  @Test
  void precedenceIsFileThenEnvThenSystemPropertiesThenOverrides() throws Exception {
    Files.writeString(
        dir.resolve(StrataConfig.SITE_FILE),
        "strata.master.rpc.port=1001\nstrata.worker.rpc.port=2001\n"
            + "strata.worker.data.port=3001\nstrata.worker.web.port=4001\n");
    Properties sys = new Properties();
    sys.setProperty("strata.worker.data.port", "3002");
    sys.setProperty("strata.worker.web.port", "4002");
    StrataConfig c =
        load(
            Map.of("strata.worker.web.port", "4003"),
            Map.of("STRATA_WORKER_RPC_PORT", "2002", "STRATA_WORKER_DATA_PORT", "3003"),
            sys);
    assertEquals(1001, c.getInt(CommonKeys.MASTER_RPC_PORT));
    assertEquals(2002, c.getInt(WorkerKeys.RPC_PORT));
    assertEquals(3002, c.getInt(WorkerKeys.DATA_PORT));
    assertEquals(4003, c.getInt(WorkerKeys.WEB_PORT));
  }

  @Test
  void unknownKeyInSiteFileFailsNamingTheKeyAndSuggestingTheClosest() throws Exception {
    Files.writeString(dir.resolve(StrataConfig.SITE_FILE), "strata.worker.rpc.prot=1\n");
    ConfigException e =
        assertThrows(ConfigException.class, () -> load(Map.of(), Map.of(), new Properties()));
    assertTrue(e.getMessage().contains("'strata.worker.rpc.prot'"), e.getMessage());
    assertTrue(e.getMessage().contains("strata.worker.rpc.port"), e.getMessage());
    assertTrue(e.getMessage().contains(StrataConfig.SITE_FILE), e.getMessage());
  }

  @Test
  void badValueFailsNamingKeyValueAndExpectedType() {
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () ->
                load(
                    Map.of("strata.worker.tier.mem.capacity", "lots"), Map.of(), new Properties()));
    assertTrue(e.getMessage().contains("strata.worker.tier.mem.capacity"), e.getMessage());
    assertTrue(e.getMessage().contains("'lots'"), e.getMessage());
    assertTrue(e.getMessage().contains("64MB"), e.getMessage());
  }

  @Test
  void sizesAndDurationsParse() {
    assertEquals(512L << 10, ConfigType.parseBytes("512KB"));
    assertEquals(1L << 30, ConfigType.parseBytes("1GiB"));
    assertEquals(10L << 30, ConfigType.parseBytes("10g"));
    assertEquals(3L << 19, ConfigType.parseBytes("1.5MB"));
    assertEquals(Duration.ofMillis(500), ConfigType.parseDuration("500ms"));
    assertEquals(Duration.ofMinutes(5), ConfigType.parseDuration("5min"));
    assertThrows(IllegalArgumentException.class, () -> ConfigType.parseBytes("12 parsecs"));
  }

  @Test
  void nonStrataSystemPropertiesAreIgnored() {
    Properties sys = new Properties();
    sys.setProperty("java.io.tmpdir", "/tmp");
    assertFalse(load(Map.of(), Map.of(), sys).rawValues().containsKey("java.io.tmpdir"));
  }

  @Test
  void committedConfigurationDocsMatchTheRegistry() throws Exception {
    Path docs = Path.of(System.getProperty("user.dir")).resolve("../../docs/configuration.md");
    assertTrue(Files.exists(docs), "docs/configuration.md is missing: run bin/gen-docs");
    assertEquals(
        ConfigDocs.render(),
        Files.readString(docs),
        "docs/configuration.md is out of date with the key classes: run bin/gen-docs");
  }
}
