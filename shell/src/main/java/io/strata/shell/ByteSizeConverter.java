package io.strata.shell;

import io.strata.common.conf.ConfigType;
import picocli.CommandLine;

/** Reads a byte count such as {@code 100}, {@code 4KB} or {@code 1MiB} from the command line. */
public final class ByteSizeConverter implements CommandLine.ITypeConverter<Long> {
  @Override
  public Long convert(String value) {
    try {
      long n = ConfigType.parseBytes(value);
      if (n < 0) {
        throw new IllegalArgumentException("negative");
      }
      return n;
    } catch (IllegalArgumentException e) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a byte count (such as 100, 4KB or 1MiB)");
    }
  }
}
