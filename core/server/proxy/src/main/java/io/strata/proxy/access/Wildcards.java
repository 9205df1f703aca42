package io.strata.proxy.access;

/**
 * Matching of policy patterns, where {@code *} stands for any run of characters (slashes included)
 * and {@code ?} for any one character, as S3 matches actions, resources and StringLike values.
 * Written by hand because java.nio's glob syntax gives {@code /}, braces and brackets meanings that
 * policies do not have. Linear in the lengths of both strings.
 */
final class Wildcards {
  private Wildcards() {}

  static boolean matches(String pattern, String s) {
    int p = 0;
    int i = 0;
    int star = -1;
    int resume = 0;
    while (i < s.length()) {
      if (p < pattern.length() && (pattern.charAt(p) == '?' || pattern.charAt(p) == s.charAt(i))) {
        p++;
        i++;
      } else if (p < pattern.length() && pattern.charAt(p) == '*') {
        star = p++;
        resume = i;
      } else if (star >= 0) {
        p = star + 1;
        i = ++resume;
      } else {
        return false;
      }
    }
    while (p < pattern.length() && pattern.charAt(p) == '*') {
      p++;
    }
    return p == pattern.length();
  }
}
