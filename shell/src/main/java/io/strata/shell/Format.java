package io.strata.shell;

import io.strata.proto.FileInfo;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** How the shell prints sizes, modes, times, durations and ratios; the same everywhere. */
public final class Format {
  private static final String[] UNITS = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneId.systemDefault());

  private Format() {}

  /**
   * A byte count: exact by default; with {@code human}, in powers of 1024 with one decimal ({@code
   * 512B}, {@code 1.5KiB}, {@code 64.0MiB}), as the configuration parser reads them.
   */
  public static String size(long bytes, boolean human) {
    if (!human) {
      return Long.toString(bytes);
    }
    return human(bytes);
  }

  /** A byte count in powers of 1024 with one decimal. */
  public static String human(long bytes) {
    if (bytes < 1024) {
      return bytes + "B";
    }
    double value = bytes;
    int unit = -1;
    while (value >= 1024 && unit < UNITS.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, "%.1f%s", value, UNITS[unit]);
  }

  /** POSIX permission bits as ls shows them, with 'd' for directories. */
  public static String mode(boolean directory, int mode) {
    return mode(directory ? 'd' : '-', mode);
  }

  /** The mode of a file as {@code ls -l} shows it: its kind, then permissions. */
  public static String mode(FileInfo f) {
    return mode(kind(f), f.getMode());
  }

  /** The letter {@code ls -l} gives a file's kind. */
  static char kind(FileInfo f) {
    if (f.getDirectory()) {
      return 'd';
    }
    return switch (f.getFileType()) {
      case FILE_TYPE_SYMLINK -> 'l';
      case FILE_TYPE_FIFO -> 'p';
      case FILE_TYPE_SOCKET -> 's';
      case FILE_TYPE_CHAR_DEVICE -> 'c';
      case FILE_TYPE_BLOCK_DEVICE -> 'b';
      default -> '-';
    };
  }

  /**
   * {@code kind} followed by the nine permission letters, with setuid and setgid shown as {@code
   * s}/{@code S} in the owner's and group's execute place and sticky as {@code t}/{@code T} in the
   * others', as {@code ls -l} does.
   */
  static String mode(char kind, int mode) {
    StringBuilder s = new StringBuilder(10).append(kind);
    String letters = "rwx";
    for (int bit = 8; bit >= 0; bit--) {
      s.append((mode & (1 << bit)) != 0 ? letters.charAt((8 - bit) % 3) : '-');
    }
    special(s, 3, (mode & 04000) != 0, 's');
    special(s, 6, (mode & 02000) != 0, 's');
    special(s, 9, (mode & 01000) != 0, 't');
    return s.toString();
  }

  private static void special(StringBuilder s, int at, boolean set, char letter) {
    if (set) {
      s.setCharAt(at, s.charAt(at) == 'x' ? letter : Character.toUpperCase(letter));
    }
  }

  /** Milliseconds since the epoch as local date and time. */
  public static String time(long epochMs) {
    return TIME.format(Instant.ofEpochMilli(epochMs));
  }

  /**
   * A length of time in its units from days down to milliseconds, leaving out those that are 0:
   * {@code 90s} is {@code 1m30s}, {@code 36h} is {@code 1d12h}, 0 is {@code 0ms}.
   */
  public static String duration(long ms) {
    if (ms <= 0) {
      return ms + "ms";
    }
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1000L, 1L};
    String[] units = {"d", "h", "m", "s", "ms"};
    StringBuilder s = new StringBuilder();
    long rest = ms;
    for (int i = 0; i < sizes.length; i++) {
      if (rest >= sizes[i]) {
        s.append(rest / sizes[i]).append(units[i]);
        rest %= sizes[i];
      }
    }
    return s.toString();
  }

  /**
   * {@code part} as a whole percentage of {@code whole}, rounded down so that 100% means all; "-"
   * when {@code whole} is 0.
   */
  public static String percent(long part, long whole) {
    if (whole <= 0) {
      return "-";
    }
    long p = part >= whole ? 100 : Math.min(99, part * 100 / whole);
    return p + "%";
  }

  /** A ratio with one decimal, or "-" when there is nothing to divide. */
  public static String ratio(long part, long whole) {
    if (whole <= 0) {
      return "-";
    }
    return String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
  }
}
