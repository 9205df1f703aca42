package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.StrataConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MountOptionsTest {
  @Test
  void cacheOptionsComeFromTheConfigurationUnlessTheUserGivesThem() {
    StrataConfig conf =
        StrataConfig.load(
            Map.of(
                "strata.fuse.attr.timeout",
                "2500ms",
                "strata.fuse.entry.timeout",
                "3s",
                "strata.fuse.max.read",
                "64KB",
                "strata.fuse.allow.other",
                "false"));
    assertEquals(
        List.of(
            "-o",
            "default_permissions,big_writes,use_ino,atomic_o_trunc,attr_timeout=2.5,entry_timeout=3,"
                + "max_read=65536"),
        MountOptions.withDefaults(List.of(), conf));
    assertEquals(
        List.of(
            "-o",
            "direct_io,attr_timeout=0",
            "-o",
            "default_permissions,big_writes,use_ino,atomic_o_trunc,entry_timeout=3,max_read=65536"),
        MountOptions.withDefaults(List.of("-o", "direct_io,attr_timeout=0"), conf));
    List<String> all =
        List.of(
            "-o",
            "attr_timeout=1,default_permissions,big_writes,use_ino,atomic_o_trunc",
            "-o",
            "entry_timeout=1,max_read=4096");
    assertEquals(all, MountOptions.withDefaults(all, conf));
  }

  @Test
  void aZeroMaxReadLeavesItToTheKernel() {
    StrataConfig conf =
        StrataConfig.load(Map.of("strata.fuse.max.read", "0", "strata.fuse.allow.other", "false"));
    assertEquals(
        List.of(
            "-o",
            "default_permissions,big_writes,use_ino,atomic_o_trunc,attr_timeout=10,entry_timeout=10"),
        MountOptions.withDefaults(List.of(), conf));
  }

  @Test
  void allowOtherIsAddedWhenThisProcessMayUseIt() {
    StrataConfig conf = StrataConfig.load(Map.of());
    boolean permitted =
        MountOptions.allowOtherPermitted(
            Path.of("/etc/fuse.conf"), new com.sun.security.auth.module.UnixSystem().getUid());
    String options = MountOptions.withDefaults(List.of(), conf).get(1);
    assertEquals(permitted, options.contains("allow_other"), options);
  }

  @Test
  void anotherUserMayUseAllowOtherOnlyWithUserAllowOtherInFuseConf(@TempDir Path dir)
      throws Exception {
    Path with =
        Files.writeString(dir.resolve("with.conf"), "# mount_max = 1000\nuser_allow_other\n");
    Path without = Files.writeString(dir.resolve("without.conf"), "#user_allow_other\n");
    assertTrue(MountOptions.allowOtherPermitted(with, 1000));
    assertFalse(MountOptions.allowOtherPermitted(without, 1000));
    assertFalse(MountOptions.allowOtherPermitted(dir.resolve("missing.conf"), 1000));
    assertTrue(MountOptions.allowOtherPermitted(without, 0));
  }
}
