package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.strata.proto.FileInfo;
import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumType;
import io.strata.proxy.checksum.ChecksumValue;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * An object's S3 metadata as extended attributes of its inode, so that it is journaled with the
 * namespace, survives restarts and renames, and is visible to every client: {@code strata.s3.etag},
 * {@code strata.s3.<standard header>} (Content-Type, Content-Encoding, Content-Disposition,
 * Content-Language, Cache-Control, Expires), {@code user.<name>} for each {@code x-amz-meta-<name>}
 * (the FUSE mount's {@code user.} namespace; header values are kept as the bytes the client sent,
 * so UTF-8 sent raw reads as text there, and returned as those bytes), {@code strata.s3.tagging}
 * (the tags in their header form) and {@code strata.s3.checksum} (algorithm, type, value). A file
 * that did not come through the proxy has none of them: its ETag is derived from its identity and
 * content fingerprint, with a "-1" suffix so that clients do not take it for an MD5 of the bytes.
 */
public final class ObjectMetadata {
  public static final String ETAG = "strata.s3.etag";
  public static final String TAGGING = "strata.s3.tagging";
  public static final String CHECKSUM = "strata.s3.checksum";

  /**
   * On an object completed from a multipart upload: the lengths of its parts in order,
   * comma-separated, for GetObject and HeadObject of one part (partNumber).
   */
  public static final String PARTS = "strata.s3.parts";

  /**
   * On an object completed from a multipart upload: the upload's id, so that a completion retried
   * after the first one succeeded (its answer lost) is answered with the object, as S3 does.
   */
  public static final String COMPLETED_UPLOAD = "strata.s3.completed-upload";

  /** On a folder: it was created as an S3 folder marker ("key/"), so listings show it. */
  public static final String MARKER = "strata.s3.marker";

  public static final String USER_PREFIX = "user.";
  public static final String HEADER_PREFIX = "strata.s3.";
  public static final String META_HEADER_PREFIX = "x-amz-meta-";

  /** The standard headers S3 keeps with an object and returns with it. */
  public static final List<String> STANDARD_HEADERS =
      List.of(
          "content-type",
          "content-encoding",
          "content-disposition",
          "content-language",
          "cache-control",
          "expires");

  /** S3's bound on user metadata: names and values of x-amz-meta-* together. */
  public static final int MAX_USER_METADATA_BYTES = 2048;

  /** The type S3 gives an object stored without one. */
  public static final String DEFAULT_CONTENT_TYPE = "binary/octet-stream";

  private static final String EMPTY_MD5 = "d41d8cd98f00b204e9800998ecf8427e";

  private ObjectMetadata() {}

  /** The ETag of an object, without quotes. */
  public static String etag(FileInfo f) {
    ByteString stored = f.getXattrsMap().get(ETAG);
    if (stored != null) {
      return stored.toStringUtf8();
    }
    if (f.getDirectory() || f.getLength() == 0) {
      return EMPTY_MD5;
    }
    String identity =
        f.getFileId()
            + ":"
            + f.getLength()
            + ":"
            + f.getModificationTimeMs()
            + ":"
            + f.getUfsFingerprint();
    return md5Hex(identity.getBytes(StandardCharsets.UTF_8)) + "-1";
  }

  static String md5Hex(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The object's Content-Type. */
  public static String contentType(FileInfo f) {
    ByteString v = f.getXattrsMap().get(HEADER_PREFIX + "content-type");
    return v == null ? DEFAULT_CONTENT_TYPE : v.toStringUtf8();
  }

  /** The stored flexible checksum, or null. */
  public static ChecksumValue checksum(FileInfo f) {
    ByteString v = f.getXattrsMap().get(CHECKSUM);
    return v == null ? null : decodeChecksum(v.toStringUtf8());
  }

  public static ByteString encodeChecksum(ChecksumValue c) {
    return ByteString.copyFromUtf8(c.algorithm().name() + ":" + c.type().name() + ":" + c.value());
  }

  /**
   * A Content-Encoding without "aws-chunked", which names how the request's body was sent and not
   * how the object is encoded (S3 does not keep it); null when nothing else is left. A value
   * without it is kept exactly as given, as S3 returns it.
   */
  static String withoutAwsChunked(String contentEncoding) {
    List<String> kept = new ArrayList<>();
    boolean dropped = false;
    for (String coding : contentEncoding.split(",")) {
      String c = coding.trim();
      if (c.equalsIgnoreCase("aws-chunked")) {
        dropped = true;
      } else if (!c.isEmpty()) {
        kept.add(c);
      }
    }
    if (kept.isEmpty()) {
      return null;
    }
    return dropped ? String.join(", ", kept) : contentEncoding;
  }

  static ChecksumValue decodeChecksum(String s) {
    String[] f = s.split(":", 3);
    if (f.length != 3) {
      return null;
    }
    try {
      return new ChecksumValue(ChecksumAlgorithm.valueOf(f[0]), f[2], ChecksumType.valueOf(f[1]));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * The metadata a PUT, CreateMultipartUpload or CopyObject (REPLACE) request gives: its standard
   * headers and x-amz-meta-* headers, as extended attributes.
   *
   * @throws S3Exception MetadataTooLarge past S3's bound on user metadata
   */
  public static Map<String, ByteString> fromRequest(HttpHeaders headers) {
    Map<String, ByteString> out = new LinkedHashMap<>();
    for (String h : STANDARD_HEADERS) {
      String v = headers.get(h);
      if (v != null && h.equals("content-encoding")) {
        v = withoutAwsChunked(v);
      }
      if (v != null) {
        out.put(HEADER_PREFIX + h, headerBytes(v));
      }
    }
    int userBytes = 0;
    for (Map.Entry<String, String> e : headers) {
      String name = e.getKey().toLowerCase(Locale.ROOT);
      if (name.startsWith(META_HEADER_PREFIX) && name.length() > META_HEADER_PREFIX.length()) {
        String metaName = name.substring(META_HEADER_PREFIX.length());
        String key = USER_PREFIX + metaName;
        ByteString sent = headerBytes(e.getValue());
        ByteString prev = out.get(key);
        userBytes += metaName.length() + sent.size();
        out.put(
            key,
            prev == null ? sent : prev.concat(ByteString.copyFrom(new byte[] {','})).concat(sent));
      }
    }
    if (userBytes > MAX_USER_METADATA_BYTES) {
      throw new S3Exception(
          S3ErrorCode.METADATA_TOO_LARGE,
          "Your metadata headers exceed the"
              + " maximum allowed metadata size ("
              + userBytes
              + " of "
              + MAX_USER_METADATA_BYTES
              + " bytes)");
    }
    return out;
  }

  /**
   * The bytes a header value came in: the HTTP layer reads each header byte as one char
   * (ISO-8859-1), so a value sent as raw UTF-8 (what clients send for non-ASCII metadata) is kept
   * as that UTF-8, and an RFC 2047 encoded one as the ASCII it is.
   */
  static ByteString headerBytes(String value) {
    return ByteString.copyFrom(value.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** A header value that the HTTP layer sends as exactly {@code bytes} (one char a byte). */
  static String headerValue(ByteString bytes) {
    return bytes.toString(StandardCharsets.ISO_8859_1);
  }

  /** The object-level attributes of {@code f} that a copy with directive COPY carries over. */
  public static Map<String, ByteString> copyable(FileInfo f) {
    Map<String, ByteString> out = new LinkedHashMap<>();
    for (Map.Entry<String, ByteString> e : f.getXattrsMap().entrySet()) {
      String k = e.getKey();
      if (k.startsWith(USER_PREFIX)
          || (k.startsWith(HEADER_PREFIX)
              && STANDARD_HEADERS.contains(k.substring(HEADER_PREFIX.length())))) {
        out.put(k, e.getValue());
      }
    }
    return out;
  }

  /** The lengths of the parts a multipart upload stored {@code f} in; null for other objects. */
  static long[] partLengths(FileInfo f) {
    ByteString v = f.getXattrsMap().get(PARTS);
    if (v == null || v.isEmpty()) {
      return null;
    }
    String[] fields = v.toStringUtf8().split(",");
    long[] lengths = new long[fields.length];
    for (int i = 0; i < fields.length; i++) {
      lengths[i] = Long.parseLong(fields[i]);
    }
    return lengths;
  }

  /** The tags of an object, in header form ("" for none). */
  public static String tagging(FileInfo f) {
    ByteString v = f.getXattrsMap().get(TAGGING);
    return v == null ? "" : v.toStringUtf8();
  }

  /** The response headers of an object's metadata (not length, range or checksum). */
  public static HttpHeaders responseHeaders(FileInfo f) {
    HttpHeaders h = new DefaultHttpHeaders();
    h.set("ETag", "\"" + etag(f) + "\"");
    h.set("Last-Modified", HttpDates.format(f.getModificationTimeMs()));
    h.set("Accept-Ranges", "bytes");
    h.set("Content-Type", contentType(f));
    for (Map.Entry<String, ByteString> e : f.getXattrsMap().entrySet()) {
      String k = e.getKey();
      if (k.startsWith(USER_PREFIX)) {
        h.add(META_HEADER_PREFIX + k.substring(USER_PREFIX.length()), headerValue(e.getValue()));
      } else if (k.startsWith(HEADER_PREFIX)) {
        String header = k.substring(HEADER_PREFIX.length());
        if (STANDARD_HEADERS.contains(header) && !header.equals("content-type")) {
          h.set(header, headerValue(e.getValue()));
        }
      }
    }
    String tags = tagging(f);
    if (!tags.isEmpty()) {
      h.setInt("x-amz-tagging-count", tags.split("&").length);
    }
    ByteString rule = f.getXattrsMap().get(LifecycleExpiry.RULE);
    if (rule != null && f.getTtlMs() > 0) {
      h.set(
          "x-amz-expiration",
          "expiry-date=\""
              + HttpDates.format(f.getModificationTimeMs() + f.getTtlMs())
              + "\", rule-id=\""
              + rule.toStringUtf8()
              + "\"");
    }
    return h;
  }
}
