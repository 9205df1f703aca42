package io.strata.proxy.auth;

import io.netty.handler.codec.http.HttpHeaders;
import io.strata.proxy.auth.CanonicalRequest.QueryParam;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The text a Signature Version 2 signature is the HMAC-SHA1 of, as S3 defines it:
 *
 * <pre>
 * METHOD \n Content-MD5 \n Content-Type \n Date (or Expires) \n CanonicalizedAmzHeaders CanonicalizedResource
 * </pre>
 *
 * <p>CanonicalizedAmzHeaders holds every {@code x-amz-*} header, named in lower case, sorted, the
 * values of a repeated name joined by commas, each line ending in a newline. CanonicalizedResource
 * is the bucket (from a virtual host) and the path as sent, still percent-encoded, then the
 * sub-resources S3 signs, sorted by name, their values decoded. Other query parameters are not
 * signed.
 *
 * <p>A presigned URL may carry {@code Content-Type}, {@code Content-MD5} and {@code x-amz-*} values
 * in its query instead of headers, as clients put them there when they presign: they are signed
 * where the header would be.
 */
final class SigV2StringToSign {
  /**
   * The query parameters that are part of the resource signed: those S3 documents (acl, delete,
   * lifecycle, location, logging, notification, partNumber, policy, requestPayment, torrent,
   * uploadId, uploads, versionId, versioning, versions, website and the response-* overrides) and
   * those the AWS SDKs sign for the sub-resources added since.
   */
  static final Set<String> SUB_RESOURCES =
      Set.of(
          "accelerate",
          "acl",
          "analytics",
          "cors",
          "delete",
          "inventory",
          "lifecycle",
          "location",
          "logging",
          "metrics",
          "notification",
          "object-lock",
          "partNumber",
          "policy",
          "replication",
          "requestPayment",
          "response-cache-control",
          "response-content-disposition",
          "response-content-encoding",
          "response-content-language",
          "response-content-type",
          "response-expires",
          "restore",
          "select",
          "select-type",
          "tagging",
          "torrent",
          "uploadId",
          "uploads",
          "versionId",
          "versioning",
          "versions",
          "website");

  private static final Pattern FOLDED_LINE = Pattern.compile("\\s*\\r?\\n\\s*");

  private SigV2StringToSign() {}

  /**
   * The string to sign from its parts.
   *
   * @param dateOrExpires the Date header as sent, empty when x-amz-date is sent (it is signed among
   *     the x-amz headers), or a presigned URL's Expires
   * @param amzHeaders the x-amz headers, lower-case names to values, sorted by name
   */
  static String of(
      String method,
      String contentMd5,
      String contentType,
      String dateOrExpires,
      Map<String, String> amzHeaders,
      String resource) {
    StringBuilder s = new StringBuilder(128);
    s.append(method).append('\n');
    s.append(contentMd5).append('\n');
    s.append(contentType).append('\n');
    s.append(dateOrExpires).append('\n');
    amzHeaders.forEach((name, value) -> s.append(name).append(':').append(value).append('\n'));
    return s.append(resource).toString();
  }

  /**
   * The x-amz headers of a request, sorted by lower-case name, and for a presigned URL the x-amz
   * query parameters not also sent as headers.
   */
  static TreeMap<String, String> amzHeaders(
      HttpHeaders headers, List<QueryParam> params, boolean presigned) {
    TreeMap<String, List<String>> values = new TreeMap<>();
    for (Map.Entry<String, String> h : headers) {
      String name = h.getKey().toLowerCase(Locale.ROOT);
      if (name.startsWith("x-amz-")) {
        values.computeIfAbsent(name, n -> new ArrayList<>()).add(unfold(h.getValue()));
      }
    }
    if (presigned) {
      TreeMap<String, List<String>> fromQuery = new TreeMap<>();
      for (QueryParam p : params) {
        String name = decoded(p.rawName()).toLowerCase(Locale.ROOT);
        if (name.startsWith("x-amz-") && !values.containsKey(name)) {
          fromQuery.computeIfAbsent(name, n -> new ArrayList<>()).add(decoded(p.rawValue()));
        }
      }
      values.putAll(fromQuery);
    }
    TreeMap<String, String> joined = new TreeMap<>();
    values.forEach((name, list) -> joined.put(name, String.join(",", list)));
    return joined;
  }

  /**
   * A header's value as signed: the header's, else for a presigned URL the query parameter of the
   * same name in lower case; empty when neither is sent.
   */
  static String header(
      HttpHeaders headers, List<QueryParam> params, String name, boolean presigned) {
    String value = headers.get(name);
    if (value != null) {
      return value.strip();
    }
    if (presigned) {
      String lower = name.toLowerCase(Locale.ROOT);
      for (QueryParam p : params) {
        if (decoded(p.rawName()).toLowerCase(Locale.ROOT).equals(lower)) {
          return decoded(p.rawValue()).strip();
        }
      }
    }
    return "";
  }

  /**
   * The CanonicalizedResource.
   *
   * @param hostBucket the bucket the Host header names (virtual-host style), else null
   * @param rawPath the path as sent, percent-encoded
   * @param plusIsSpace how to read a {@code +} in a sub-resource's value
   */
  static String resource(
      String hostBucket, String rawPath, List<QueryParam> params, boolean plusIsSpace) {
    StringBuilder s = new StringBuilder(rawPath.length() + 32);
    if (hostBucket != null) {
      s.append('/').append(hostBucket);
    }
    s.append(rawPath.isEmpty() ? "/" : rawPath);
    TreeMap<String, String> signed = new TreeMap<>();
    for (QueryParam p : params) {
      if (SUB_RESOURCES.contains(p.rawName())) {
        signed.putIfAbsent(
            p.rawName(),
            new String(
                CanonicalRequest.decode(p.rawValue(), plusIsSpace, "query"),
                StandardCharsets.UTF_8));
      }
    }
    char separator = '?';
    for (Map.Entry<String, String> e : signed.entrySet()) {
      s.append(separator).append(e.getKey());
      if (!e.getValue().isEmpty()) {
        s.append('=').append(e.getValue());
      }
      separator = '&';
    }
    return s.toString();
  }

  private static String unfold(String value) {
    return FOLDED_LINE.matcher(value.strip()).replaceAll(" ");
  }

  private static String decoded(String raw) {
    return new String(CanonicalRequest.decode(raw, false, "query"), StandardCharsets.UTF_8);
  }
}
