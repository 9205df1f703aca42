package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.strata.common.conf.StrataConfig;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MountOptionsTest {
  @Test
  void cacheOptionsComeFromTheConfigurationUnlessTheUserGivesThem() {
    StrataConfig conf = StrataConfig.load(Map.of("strata.fuse.attr.timeout", "2500ms",
        "strata.fuse.entry.timeout", "3s", "strata.fuse.max.read", "64KB"));
    assertEquals(List.of("-o", "attr_timeout=2.5,entry_timeout=3,max_read=65536"),
        MountOptions.withDefaults(List.of(), conf));
    assertEquals(List.of("-o", "direct_io,attr_timeout=0", "-o", "entry_timeout=3,max_read=65536"),
        MountOptions.withDefaults(List.of("-o", "direct_io,attr_timeout=0"), conf));
    List<String> all = List.of("-o", "attr_timeout=1", "-o", "entry_timeout=1,max_read=4096");
    assertEquals(all, MountOptions.withDefaults(all, conf));
  }

  @Test
  void aZeroMaxReadLeavesItToTheKernel() {
    StrataConfig conf = StrataConfig.load(Map.of("strata.fuse.max.read", "0"));
    assertEquals(List.of("-o", "attr_timeout=1,entry_timeout=1"),
        MountOptions.withDefaults(List.of(), conf));
  }
}
