package io.strata.proxy.s3;

/**
 * S3's conditional requests. Reads (GET, HEAD): If-Match and If-Unmodified-Since fail with 412
 * PreconditionFailed, If-None-Match and If-Modified-Since with 304 Not Modified; a true If-Match
 * overrides a false If-Unmodified-Since, and a failing If-None-Match overrides a true
 * If-Modified-Since, as RFC 7232 orders them. Copies: any failing x-amz-copy-source-if-* condition
 * is 412. Times compare at whole seconds, as HTTP dates carry them.
 */
final class Conditions {
  private Conditions() {}

  static void checkRead(S3Request r, String etag, long mtimeMs) {
    String ifMatch = r.header("If-Match");
    String ifNoneMatch = r.header("If-None-Match");
    long ifModifiedSince = HttpDates.parse(r.header("If-Modified-Since"));
    long ifUnmodifiedSince = HttpDates.parse(r.header("If-Unmodified-Since"));
    long mtime = mtimeMs / 1000 * 1000;
    if (ifMatch != null) {
      if (!matches(ifMatch, etag)) {
        throw new S3Exception(
            S3ErrorCode.PRECONDITION_FAILED,
            "At least one of the pre-conditions you specified did not hold: If-Match");
      }
    } else if (ifUnmodifiedSince >= 0 && mtime > ifUnmodifiedSince) {
      throw new S3Exception(
          S3ErrorCode.PRECONDITION_FAILED,
          "At least one of the pre-conditions you specified did not hold: If-Unmodified-Since");
    }
    if (ifNoneMatch != null) {
      if (matches(ifNoneMatch, etag)) {
        throw notModified(etag);
      }
    } else if (ifModifiedSince >= 0 && mtime <= ifModifiedSince) {
      throw notModified(etag);
    }
  }

  static void checkCopySource(S3Request r, String etag, long mtimeMs) {
    String ifMatch = r.header("x-amz-copy-source-if-match");
    String ifNoneMatch = r.header("x-amz-copy-source-if-none-match");
    long ifModifiedSince = HttpDates.parse(r.header("x-amz-copy-source-if-modified-since"));
    long ifUnmodifiedSince = HttpDates.parse(r.header("x-amz-copy-source-if-unmodified-since"));
    long mtime = mtimeMs / 1000 * 1000;
    boolean ok = true;
    if (ifMatch != null) {
      ok = matches(ifMatch, etag);
    } else if (ifUnmodifiedSince >= 0) {
      ok = mtime <= ifUnmodifiedSince;
    }
    if (ok && ifNoneMatch != null) {
      ok = !matches(ifNoneMatch, etag);
    } else if (ok && ifModifiedSince >= 0 && ifNoneMatch == null) {
      ok = mtime > ifModifiedSince;
    }
    if (!ok) {
      throw new S3Exception(
          S3ErrorCode.PRECONDITION_FAILED,
          "At least one of the pre-conditions you specified did not hold: the copy source's");
    }
  }

  /** Whether an If-Match / If-None-Match value names the ETag ('*' names any). */
  static boolean matches(String header, String etag) {
    for (String part : header.split(",")) {
      String t = part.trim();
      if (t.startsWith("W/")) {
        t = t.substring(2);
      }
      if (t.equals("*")) {
        return true;
      }
      if (t.length() >= 2 && t.startsWith("\"") && t.endsWith("\"")) {
        t = t.substring(1, t.length() - 1);
      }
      if (t.equals(etag)) {
        return true;
      }
    }
    return false;
  }

  /** 304 Not Modified, with the ETag as S3 sends it. */
  static S3Exception notModified(String etag) {
    return new S3Exception(S3ErrorCode.NOT_MODIFIED, "Not Modified")
        .withHeader("ETag", "\"" + etag + "\"");
  }
}
