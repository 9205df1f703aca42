package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strata.common.ProcMounts;
import java.util.List;
import org.junit.jupiter.api.Test;

class FuseMainTest {
  @Test
  void optionsPassToLibfuseAsGiven() {
    assertEquals(
        List.of("-o", "attr_timeout=1,entry_timeout=2", "-o", "direct_io"),
        FuseMain.fuseOptions(
            new String[] {
              "/mnt/s", "/data", "-o", "attr_timeout=1,entry_timeout=2", "-odirect_io"
            }));
    assertEquals(List.of(), FuseMain.fuseOptions(new String[] {"/mnt/s", "/"}));
  }

  @Test
  void badArgumentsAreRejectedWithExitCodeTwo() {
    assertThrows(
        IllegalArgumentException.class,
        () -> FuseMain.fuseOptions(new String[] {"/mnt/s", "/", "-o"}));
    assertThrows(
        IllegalArgumentException.class,
        () -> FuseMain.fuseOptions(new String[] {"/mnt/s", "/", "--bogus"}));
    assertEquals(2, FuseMain.run(new String[] {"/mnt/s"}));
  }

  @Test
  void mountPointsWithEscapedCharactersAreRecognised() {
    assertEquals("/tmp/with space\\x", ProcMounts.unescape("/tmp/with\\040space\\134x"));
    assertEquals("/tmp/plain", ProcMounts.unescape("/tmp/plain"));
    assertEquals("/tmp/a\\9", ProcMounts.unescape("/tmp/a\\9"));
  }
}
