package io.strata.common;

import java.util.Comparator;

/**
 * The order of names in every listing: the master's (the order of its metastore's keys, a name's
 * UTF-8 bytes compared unsigned), the mount's and the S3 proxy's, where it is also the order S3
 * gives keys. For valid strings it is the order of code points; it differs from {@link
 * String#compareTo}, which compares UTF-16 units, only for characters beyond U+FFFF next to ones
 * from U+E000 to U+FFFF. Compared without encoding either string.
 */
public final class NameOrder {
  /** {@link #compare} as a comparator. */
  public static final Comparator<String> COMPARATOR = NameOrder::compare;

  private NameOrder() {}

  /** Negative, zero or positive as {@code a} lists before, with or after {@code b}. */
  public static int compare(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      char ua = a.charAt(i);
      char ub = b.charAt(j);
      if (ua == ub) {
        // Equal UTF-16 units: equal code points so far (a surrogate pair matches unit by unit).
        i++;
        j++;
        continue;
      }
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      return Integer.compare(ca, cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
