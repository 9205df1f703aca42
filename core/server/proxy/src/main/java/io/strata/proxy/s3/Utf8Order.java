package io.strata.proxy.s3;

import java.util.Comparator;

/**
 * The order of S3 keys and of the namespace's listings: by UTF-8 bytes, which is the order of code
 * points. Java's {@code String.compareTo} compares UTF-16 units and puts characters past U+FFFF
 * before U+E000..U+FFFF, so it cannot be used for keys.
 */
final class Utf8Order {
  static final Comparator<String> COMPARATOR = Utf8Order::compare;

  private Utf8Order() {}

  static int compare(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
