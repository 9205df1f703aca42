package io.strata.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.ConfigException;
import io.strata.common.conf.StrataConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RootMountOptionsTest {
  @TempDir Path home;

  @Test
  void rootMountOptionsFromConfigurationApplyToTheRoot() throws Exception {
    try (TestMaster m =
        TestMaster.start(home, Map.of("strata.master.root.ufs.options", "sync.interval=always"))) {
      assertEquals(List.of(), m.names("/"));
      Files.writeString(m.ufs.resolve("late.txt"), "late");
      // With sync.interval=always on the root mount, no per-call sync is needed.
      assertEquals(List.of("late.txt"), m.names("/"));
    }
  }

  @Test
  void aMalformedRootOptionIsNamed() {
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () ->
                new MasterServer(
                    StrataConfig.load(
                        TestMaster.config(
                            home, Map.of("strata.master.root.ufs.options", "s3.path.style")))));
    assertTrue(
        e.getMessage().contains("strata.master.root.ufs.options")
            && e.getMessage().contains("s3.path.style"),
        e.getMessage());
  }
}
