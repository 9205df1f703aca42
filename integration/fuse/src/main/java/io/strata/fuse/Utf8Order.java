package io.strata.fuse;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The order of names in the master's listings: their UTF-8 bytes, compared unsigned (the order of
 * the metastore's keys). It differs from {@link String#compareTo} for names with characters beyond
 * U+FFFF next to ones from U+E000 to U+FFFF.
 */
final class Utf8Order {
  private Utf8Order() {}

  static int compare(String a, String b) {
    if (isAscii(a) && isAscii(b)) {
      return a.compareTo(b);
    }
    return Arrays.compareUnsigned(
        a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
  }

  private static boolean isAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }
}
