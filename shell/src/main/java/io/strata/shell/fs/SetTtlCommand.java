package io.strata.shell.fs;

import io.strata.client.SetAttributeOptions;
import io.strata.common.conf.ConfigType;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.TtlAction;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs setTtl [--action free|delete] PATH DURATION}: gives a path a time to live and
 * prints when it ends.
 */
@Command(
    name = "setTtl",
    description = {
      "Give a file or directory a time to live: once DURATION has passed since its modification"
          + " time, the master frees its cached blocks and removes the time to live (free, the"
          + " default), or deletes it, with everything below a directory, from Strata and the"
          + " under store (delete).",
      "DURATION is a number with a unit (ms, s, m, h, d), or plain milliseconds."
    })
final class SetTtlCommand extends FsAction {
  @Option(
      names = "--action",
      paramLabel = "free|delete",
      defaultValue = "free",
      converter = ActionConverter.class,
      description = "What happens once the time has passed (default: free).")
  TtlAction action;

  @Parameters(index = "0", paramLabel = "PATH")
  String path;

  @Parameters(index = "1", paramLabel = "DURATION", converter = DurationConverter.class)
  Duration ttl;

  SetTtlCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    FileInfo f = fs().setAttribute(path, SetAttributeOptions.defaults().ttl(ttl, action));
    out().println("TTL of " + path + ": " + describe(f));
  }

  /**
   * A path's time to live as {@code fs stat} and {@code fs setTtl} print it: {@code 1h30m, then
   * free (at 2026-11-22 03:54:51)}, or {@code none}.
   */
  static String describe(FileInfo f) {
    if (f.getTtlMs() <= 0) {
      return "none";
    }
    String then = f.getTtlAction() == TtlAction.TTL_ACTION_DELETE ? "delete" : "free";
    String at;
    try {
      at = Format.time(Math.addExact(f.getModificationTimeMs(), f.getTtlMs()));
    } catch (ArithmeticException | java.time.DateTimeException e) {
      at = "never";
    }
    return Format.duration(f.getTtlMs()) + ", then " + then + " (at " + at + ")";
  }

  /** Reads {@code free} or {@code delete}, in any case. */
  static final class ActionConverter implements CommandLine.ITypeConverter<TtlAction> {
    @Override
    public TtlAction convert(String value) {
      switch (value.trim().toLowerCase(Locale.ROOT)) {
        case "free":
          return TtlAction.TTL_ACTION_FREE;
        case "delete":
          return TtlAction.TTL_ACTION_DELETE;
        default:
          throw new CommandLine.TypeConversionException(
              "'" + value + "' is not a time-to-live action (give free or delete)");
      }
    }
  }

  /** Reads a positive duration such as {@code 90s}, {@code 30m}, {@code 1h} or {@code 500}. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      // A time to live travels in milliseconds: one too long for them is refused here.
      long millis;
      try {
        millis = ConfigType.parseDuration(value).toMillis();
      } catch (IllegalArgumentException | ArithmeticException e) {
        millis = 0;
      }
      if (millis <= 0) {
        throw new CommandLine.TypeConversionException(
            "'"
                + value
                + "' is not a time to live"
                + " (give a positive duration such as 90s, 30m, 1h, 7d, or milliseconds)");
      }
      return Duration.ofMillis(millis);
    }
  }
}
