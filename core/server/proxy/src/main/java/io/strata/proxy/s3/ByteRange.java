package io.strata.proxy.s3;

/**
 * One byte range of a Range header as S3 reads it: {@code bytes=a-b}, {@code bytes=a-} or {@code
 * bytes=-n}, clipped to the object. A header S3 would ignore (not bytes, several ranges, not a
 * number) is ignored; a range that starts past the end (or any range of an empty object) is
 * InvalidRange (416).
 *
 * @param start first byte
 * @param end last byte, inclusive
 */
record ByteRange(long start, long end) {
  long length() {
    return end - start + 1;
  }

  /** The range a header asks for of an object of {@code size} bytes; null for the whole. */
  static ByteRange parse(String header, long size) {
    if (header == null) {
      return null;
    }
    String h = header.trim();
    if (!h.startsWith("bytes=")) {
      return null;
    }
    String spec = h.substring("bytes=".length()).trim();
    if (spec.contains(",")) {
      return null;
    }
    int dash = spec.indexOf('-');
    if (dash < 0) {
      return null;
    }
    String a = spec.substring(0, dash).trim();
    String b = spec.substring(dash + 1).trim();
    try {
      if (a.isEmpty()) {
        if (b.isEmpty()) {
          return null;
        }
        long suffix = Long.parseLong(b);
        if (suffix < 0) {
          return null;
        }
        if (size == 0 || suffix == 0) {
          throw unsatisfiable(size);
        }
        return new ByteRange(Math.max(0, size - suffix), size - 1);
      }
      long first = Long.parseLong(a);
      // An open range runs to the end, wherever it starts: past the end it is unsatisfiable.
      long last = b.isEmpty() ? Long.MAX_VALUE : Long.parseLong(b);
      if (first < 0 || last < first) {
        return null;
      }
      if (first >= size) {
        throw unsatisfiable(size);
      }
      return new ByteRange(first, Math.min(last, size - 1));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static S3Exception unsatisfiable(long size) {
    return new S3Exception(
            S3ErrorCode.INVALID_RANGE,
            "The requested range is not satisfiable" + " (the object has " + size + " bytes)")
        .withHeader("Content-Range", "bytes */" + size);
  }
}
