package io.strata.shell.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.StrataConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client file of a multi-master `local up` completes only configurations silent on it. */
class LocalClientConfTest {
  private static final List<String> MASTERS =
      List.of("127.0.0.1:19200", "127.0.0.1:19210", "127.0.0.1:19220");

  @TempDir Path home;

  private StrataConfig conf(Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put("strata.home", home.toString());
    m.put("strata.conf.dir", home.resolve("conf").toString());
    return StrataConfig.load(m);
  }

  @Test
  void aCommandForTheFirstMasterGetsEveryMaster() throws Exception {
    assertTrue(LocalClientConf.completion(conf(Map.of())).isEmpty(), "no file, nothing");
    LocalClientConf.write(conf(Map.of()), MASTERS);
    assertEquals(
        Map.of("strata.master.addresses", String.join(",", MASTERS)),
        LocalClientConf.completion(conf(Map.of())));
    assertEquals(MASTERS, LocalClientConf.read(conf(Map.of())));
    LocalClientConf.delete(conf(Map.of()));
    assertFalse(Files.exists(LocalClientConf.file(conf(Map.of()))));
  }

  @Test
  void aCommandConfiguredElsewhereIsLeftAlone() throws Exception {
    LocalClientConf.write(conf(Map.of()), MASTERS);
    assertTrue(
        LocalClientConf.completion(
                conf(Map.of("strata.master.addresses", "m1:19200,m2:19200,m3:19200")))
            .isEmpty());
    assertTrue(LocalClientConf.completion(conf(Map.of("strata.master.hostname", "m1"))).isEmpty());
    assertEquals(
        1,
        LocalClientConf.completion(conf(Map.of("strata.master.rpc.port", "19220"))).size(),
        "any of the local masters will do");
  }
}
