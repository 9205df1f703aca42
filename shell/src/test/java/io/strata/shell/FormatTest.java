package io.strata.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class FormatTest {
  @Test
  void humanSizesUsePowersOf1024WithOneDecimal() {
    assertEquals("0B", Format.human(0));
    assertEquals("1023B", Format.human(1023));
    assertEquals("1.0KiB", Format.human(1024));
    assertEquals("1.5KiB", Format.human(1536));
    assertEquals("64.0MiB", Format.human(64L << 20));
    assertEquals("1.5GiB", Format.human(3L << 29));
    assertEquals("2.0TiB", Format.human(2L << 40));
    assertEquals("8.0EiB", Format.human(Long.MAX_VALUE));
    assertEquals("1536", Format.size(1536, false));
    assertEquals("1.5KiB", Format.size(1536, true));
  }

  @Test
  void modesReadLikeLs() {
    assertEquals("drwxr-xr-x", Format.mode(true, 0755));
    assertEquals("-rw-r--r--", Format.mode(false, 0644));
    assertEquals("-rwx------", Format.mode(false, 0700));
    assertEquals("----------", Format.mode(false, 0));
  }

  @Test
  void percentagesRoundDownSoThatOnlyAllIsHundred() {
    assertEquals("0%", Format.percent(0, 10));
    assertEquals("99%", Format.percent(999, 1000));
    assertEquals("100%", Format.percent(1000, 1000));
    assertEquals("-", Format.percent(0, 0));
    assertEquals("75.0%", Format.ratio(3, 4));
    assertEquals("-", Format.ratio(0, 0));
  }

  @Test
  void durationsNameTheirNonZeroUnits() {
    assertEquals("0ms", Format.duration(0));
    assertEquals("250ms", Format.duration(250));
    assertEquals("1m30s", Format.duration(90_000));
    assertEquals("1h", Format.duration(3_600_000));
    assertEquals("1d12h", Format.duration(129_600_000));
    assertEquals(
        "2d3h4m5s6ms", Format.duration(2 * 86_400_000L + 3 * 3_600_000L + 4 * 60_000L + 5_006L));
  }

  @Test
  void byteCountsOnTheCommandLineAcceptUnits() {
    ByteSizeConverter c = new ByteSizeConverter();
    assertEquals(100L, c.convert("100"));
    assertEquals(4096L, c.convert("4KB"));
    assertEquals(1L << 20, c.convert("1MiB"));
    assertThrows(CommandLine.TypeConversionException.class, () -> c.convert("ten"));
  }
}
