package io.strata.shell.fs;

import io.strata.common.conf.ConfigType;
import java.util.Locale;
import picocli.CommandLine;

/**
 * Reads a rate in bytes per second such as {@code 200MB}, {@code 1.5GiB} or {@code 200MB/s} (units
 * as in the configuration: KB and KiB are both 1024 bytes). Only positive rates are taken: no cap
 * is written by leaving the option out.
 */
final class BandwidthConverter implements CommandLine.ITypeConverter<Long> {
  @Override
  public Long convert(String value) {
    String v = value.trim();
    if (v.toLowerCase(Locale.ROOT).endsWith("/s")) {
      v = v.substring(0, v.length() - 2);
    }
    long n;
    try {
      n = ConfigType.parseBytes(v);
    } catch (IllegalArgumentException e) {
      n = -1;
    }
    if (n <= 0) {
      throw new CommandLine.TypeConversionException(
          "'"
              + value
              + "' is not a rate in bytes"
              + " per second (such as 200MB or 1GiB; leave the option out for no cap)");
    }
    return n;
  }
}
