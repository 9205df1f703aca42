package io.strata.shell.fs;

import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.shell.Format;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * The one-line progress of a load job: state, files and bytes done of the totals, the average and
 * the recent rate, the ETA, the failures so far and what the job waits for. Totals that are still
 * growing (the tree is being listed) end in {@code +} and the ETA is {@code ?} until they are
 * final.
 *
 * <p>Rates are measured on the job's own clock ({@code elapsed_ms} as the master reports it), so a
 * master's downtime or a slow poll does not distort them. The recent rate spans the last {@value
 * #RECENT_WINDOW_MS} ms of that clock, from the statuses given to {@link #render}; a status of
 * another job starts the measurement afresh. Not thread-safe.
 */
final class LoadProgressLine {
  static final long RECENT_WINDOW_MS = 10_000;

  /** What one status said: elapsed ms, bytes done, files done. */
  private record Sample(long elapsedMs, long bytes, long files) {}

  private final ArrayDeque<Sample> samples = new ArrayDeque<>();
  private long jobId = Long.MIN_VALUE;

  /** Takes in a status and returns its line. */
  String render(LoadJobStatus s) {
    record(s);
    String more = s.getListingDone() ? "" : "+";
    StringBuilder b =
        new StringBuilder(160)
            .append("Loading ")
            .append(s.getPath())
            .append(": ")
            .append(stateName(s.getState()))
            .append(", ")
            .append(s.getFilesDone())
            .append('/')
            .append(s.getFilesTotal())
            .append(more)
            .append(" files, ")
            .append(Format.human(s.getBytesDone()))
            .append('/')
            .append(Format.human(s.getBytesTotal()))
            .append(more);
    if (s.getListingDone()) {
      b.append(" (")
          .append(
              s.getBytesTotal() > 0
                  ? Format.percent(s.getBytesDone(), s.getBytesTotal())
                  : Format.percent(s.getFilesDone(), s.getFilesTotal()))
          .append(')');
    }
    b.append(", ").append(rate(averageRate(s)));
    OptionalDouble recent = recentRate();
    if (recent.isPresent()) {
      b.append(" (now ").append(rate(recent.getAsDouble())).append(')');
    }
    b.append(", ETA ").append(eta(s)).append(", ").append(s.getFilesFailed()).append(" failed");
    if (!s.getWaitingFor().isEmpty()) {
      b.append(", waiting for ").append(s.getWaitingFor());
    }
    return b.toString();
  }

  /** Bytes done per second over the job's whole running time; -1 before any time passed. */
  static double averageRate(LoadJobStatus s) {
    return s.getElapsedMs() <= 0 ? -1 : s.getBytesDone() * 1000.0 / s.getElapsedMs();
  }

  /** Bytes done per second over the recent window; empty until two statuses span time. */
  OptionalDouble recentRate() {
    return recent(true);
  }

  /**
   * The time left, from what remains of the totals and the recent rate (the average one when there
   * is no recent one yet): "?" while the totals are not final, outside loading, or before anything
   * moved.
   */
  String eta(LoadJobStatus s) {
    if (!s.getListingDone() || s.getState() != LoadJobState.LOAD_RUNNING) {
      return "?";
    }
    // A tree of empty files has no bytes to count: its progress is in files.
    boolean byBytes = s.getBytesTotal() > 0;
    double left =
        byBytes
            ? s.getBytesTotal() - s.getBytesDone()
            : s.getFilesTotal() - s.getFilesDone() - s.getFilesFailed();
    if (left <= 0) {
      return duration(0);
    }
    OptionalDouble recent = recent(byBytes);
    double rate =
        recent.isPresent() && recent.getAsDouble() > 0
            ? recent.getAsDouble()
            : s.getElapsedMs() <= 0
                ? -1
                : (byBytes ? s.getBytesDone() : s.getFilesDone()) * 1000.0 / s.getElapsedMs();
    if (rate <= 0) {
      return "?";
    }
    return duration((long) Math.ceil(left / rate * 1000));
  }

  /**
   * A span of time as a person reads it: {@code 4.2s} under 10 s, {@code 42s}, {@code 3m07s},
   * {@code 2h05m}.
   */
  static String duration(long ms) {
    if (ms < 10_000) {
      return String.format(Locale.ROOT, "%.1fs", Math.max(0, ms) / 1000.0);
    }
    long s = ms / 1000;
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
    }
    return String.format(Locale.ROOT, "%dh%02dm", s / 3600, s / 60 % 60);
  }

  /** A rate in bytes per second as {@code 12.5MiB/s}; "-" when unknown. */
  static String rate(double bytesPerSecond) {
    return bytesPerSecond < 0 ? "-" : Format.human((long) bytesPerSecond) + "/s";
  }

  /** The state as a word of the line. */
  static String stateName(LoadJobState state) {
    switch (state) {
      case LOAD_LISTING:
        return "listing";
      case LOAD_RUNNING:
        return "running";
      case LOAD_VERIFYING:
        return "verifying";
      case LOAD_SUCCEEDED:
        return "succeeded";
      case LOAD_FAILED:
        return "failed";
      case LOAD_STOPPED:
        return "stopped";
      default:
        return "starting";
    }
  }

  private void record(LoadJobStatus s) {
    Sample last = samples.peekLast();
    if (s.getJobId() != jobId || (last != null && s.getElapsedMs() < last.elapsedMs())) {
      samples.clear();
      jobId = s.getJobId();
      last = null;
    }
    Sample now = new Sample(s.getElapsedMs(), s.getBytesDone(), s.getFilesDone());
    if (last != null && last.elapsedMs() == now.elapsedMs()) {
      samples.pollLast();
    }
    samples.addLast(now);
    // Keep one sample at or beyond the window's start, so the window is spanned once it can be.
    while (samples.size() > 2) {
      Sample second = samples.stream().skip(1).findFirst().orElseThrow();
      if (now.elapsedMs() - second.elapsedMs() < RECENT_WINDOW_MS) {
        break;
      }
      samples.pollFirst();
    }
  }

  private OptionalDouble recent(boolean bytes) {
    if (samples.size() < 2) {
      return OptionalDouble.empty();
    }
    Sample first = samples.peekFirst();
    Sample last = samples.peekLast();
    long ms = last.elapsedMs() - first.elapsedMs();
    if (ms <= 0) {
      return OptionalDouble.empty();
    }
    long moved = bytes ? last.bytes() - first.bytes() : last.files() - first.files();
    return OptionalDouble.of(Math.max(0, moved) * 1000.0 / ms);
  }
}
