package io.strata.proxy.s3;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/**
 * HTTP dates as S3 writes them (RFC 1123 with a two-digit day, "Tue, 03 Jun 2008 11:05:30 GMT") and
 * as clients send them in conditional headers (RFC 1123, RFC 850 or asctime).
 */
public final class HttpDates {
  private static final DateTimeFormatter IMF =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter RFC_850 =
      DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter ASCTIME =
      DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC);

  private HttpDates() {}

  public static String format(long epochMs) {
    return IMF.format(Instant.ofEpochMilli(epochMs));
  }

  /** Milliseconds since the epoch, or -1 when the text is no HTTP date (S3 then ignores it). */
  public static long parse(String text) {
    if (text == null) {
      return -1;
    }
    String t = text.trim();
    for (DateTimeFormatter f :
        new DateTimeFormatter[] {IMF, DateTimeFormatter.RFC_1123_DATE_TIME, RFC_850, ASCTIME}) {
      try {
        return ZonedDateTime.parse(t, f).toInstant().toEpochMilli();
      } catch (DateTimeParseException e) {
        // try the next form
      }
    }
    try {
      return Instant.parse(t).toEpochMilli();
    } catch (DateTimeParseException e) {
      return -1;
    }
  }
}
