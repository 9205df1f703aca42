package io.strata.worker.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.StrataConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LoadSettingsTest {
  @Test
  void workerKeysGiveTheSettingsWithTheChunkRoundedUpTo4KiB() {
    LoadSettings defaults = LoadSettings.fromWorker(StrataConfig.load(Map.of()));
    assertEquals(new LoadSettings(16, 1024, 4 << 20), defaults);
    LoadSettings set =
        LoadSettings.fromWorker(
            StrataConfig.load(
                Map.of(
                    "strata.worker.load.threads", "8",
                    "strata.worker.load.queue.size", "10",
                    "strata.worker.load.chunk.size", "5000")));
    assertEquals(new LoadSettings(8, 10, 8192), set);
  }

  @Test
  void valuesOutOfRangeFailNamingTheirKey() {
    IllegalArgumentException threads =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                LoadSettings.fromWorker(
                    StrataConfig.load(Map.of("strata.worker.load.threads", "0"))));
    assertTrue(threads.getMessage().contains("strata.worker.load.threads"), threads.getMessage());
    IllegalArgumentException queue =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                LoadSettings.fromWorker(
                    StrataConfig.load(Map.of("strata.worker.load.queue.size", "0"))));
    assertTrue(queue.getMessage().contains("strata.worker.load.queue.size"), queue.getMessage());
    IllegalArgumentException chunk =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                LoadSettings.fromWorker(
                    StrataConfig.load(Map.of("strata.worker.load.chunk.size", "2GB"))));
    assertTrue(chunk.getMessage().contains("strata.worker.load.chunk.size"), chunk.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new LoadSettings(1, 1, 5000));
  }
}
