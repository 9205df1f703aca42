package io.strata.common.conf;

import java.time.Duration;
import java.util.Locale;

/**
 * The value types a configuration key can hold, each with its parser. Parsers reject bad text with
 * an {@link IllegalArgumentException} whose message says what was expected.
 */
public enum ConfigType {
  STRING("text"),
  INT("integer"),
  LONG("integer"),
  BOOLEAN("true or false"),
  /** A byte count: a plain number of bytes or one with a unit (512KB, 64MiB, 1GB, 10g). */
  BYTES("size such as 64MB or 1GiB"),
  /** A duration: a number with a unit (500ms, 30s, 5min, 2h); a bare number is milliseconds. */
  DURATION("duration such as 500ms, 30s or 5min");

  private final String expected;

  ConfigType(String expected) {
    this.expected = expected;
  }

  /** What a valid value looks like, for error messages. */
  public String expected() {
    return expected;
  }

  Object parse(String text) {
    String s = text.trim();
    switch (this) {
      case STRING:
        return text;
      case INT:
        return Integer.parseInt(s);
      case LONG:
        return Long.parseLong(s);
      case BOOLEAN:
        if (s.equalsIgnoreCase("true")) {
          return Boolean.TRUE;
        }
        if (s.equalsIgnoreCase("false")) {
          return Boolean.FALSE;
        }
        throw new IllegalArgumentException("not true or false");
      case BYTES:
        return parseBytes(s);
      case DURATION:
        return parseDuration(s);
      default:
        throw new AssertionError(this);
    }
  }

  /** Parses sizes; KB/MB/GB and KiB/MiB/GiB are both powers of 1024, as in most storage tools. */
  public static long parseBytes(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT).replace("_", "");
    int i = 0;
    while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
      i++;
    }
    if (i == 0) {
      throw new IllegalArgumentException("no number in '" + text + "'");
    }
    double number = Double.parseDouble(s.substring(0, i));
    String unit = s.substring(i).trim();
    long multiplier;
    switch (unit) {
      case "":
      case "b":
        multiplier = 1L;
        break;
      case "k":
      case "kb":
      case "kib":
        multiplier = 1L << 10;
        break;
      case "m":
      case "mb":
      case "mib":
        multiplier = 1L << 20;
        break;
      case "g":
      case "gb":
      case "gib":
        multiplier = 1L << 30;
        break;
      case "t":
      case "tb":
      case "tib":
        multiplier = 1L << 40;
        break;
      default:
        throw new IllegalArgumentException("unknown size unit '" + unit + "'");
    }
    return (long) (number * multiplier);
  }

  public static Duration parseDuration(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    int i = 0;
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
    }
    if (i == 0) {
      throw new IllegalArgumentException("no number in '" + text + "'");
    }
    long n = Long.parseLong(s.substring(0, i));
    String unit = s.substring(i).trim();
    switch (unit) {
      case "":
      case "ms":
        return Duration.ofMillis(n);
      case "s":
      case "sec":
        return Duration.ofSeconds(n);
      case "m":
      case "min":
        return Duration.ofMinutes(n);
      case "h":
        return Duration.ofHours(n);
      case "d":
        return Duration.ofDays(n);
      default:
        throw new IllegalArgumentException("unknown duration unit '" + unit + "'");
    }
  }
}
