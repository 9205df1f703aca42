package io.strata.proxy.s3;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.proto.FileInfo;
import io.strata.proxy.xml.ObjectAttributesResult;
import io.strata.proxy.xml.S3XmlWriter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * GetObjectAttributes: what the object's metadata says of it, without its bytes, for the attributes
 * {@code x-amz-object-attributes} names -- its ETag, its flexible checksum when it was stored with
 * one, the parts of an object a multipart upload made (their numbers and lengths, paged by {@code
 * x-amz-max-parts} and {@code x-amz-part-number-marker}; per-part checksums are not kept, so none
 * are given), its storage class (always STANDARD) and its size. A read: it needs the permission a
 * GET needs.
 */
final class ObjectAttributes {
  static final String ATTRIBUTES_HEADER = "x-amz-object-attributes";
  static final List<String> NAMES =
      List.of("ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize");
  static final int MAX_PARTS = 1000;

  private final ProxyContext ctx;

  ObjectAttributes(ProxyContext ctx) {
    this.ctx = ctx;
  }

  void get(S3Request r) throws IOException {
    Set<String> asked = asked(r.headers().getAll(ATTRIBUTES_HEADER));
    int maxParts = nonNegative(r, "x-amz-max-parts", MAX_PARTS);
    int marker = nonNegative(r, "x-amz-part-number-marker", 0);
    FileInfo f = ObjectReads.object(ctx, r);
    ctx.access().checkRead(r.principal(), f);
    long[] parts = ObjectMetadata.partLengths(f);
    ObjectAttributesResult result =
        new ObjectAttributesResult(
            asked.contains("ETag") ? ObjectMetadata.etag(f) : null,
            asked.contains("Checksum") ? ObjectMetadata.checksum(f) : null,
            asked.contains("ObjectParts") && parts != null
                ? page(parts, marker, Math.min(maxParts, MAX_PARTS))
                : null,
            asked.contains("StorageClass") ? "STANDARD" : null,
            asked.contains("ObjectSize") ? (f.getDirectory() ? 0L : f.getLength()) : null);
    HttpHeaders h = r.baseHeaders();
    h.set("Content-Type", "application/xml");
    h.set("Last-Modified", HttpDates.format(f.getModificationTimeMs()));
    r.exchange().respond(HttpResponseStatus.OK, h, S3XmlWriter.objectAttributes(result));
  }

  /**
   * The attribute names of the header's values (comma-separated, possibly in several headers).
   *
   * @throws S3Exception InvalidRequest for none, InvalidArgument for a name S3 does not define (the
   *     codes S3 answers with)
   */
  static Set<String> asked(List<String> headerValues) {
    Set<String> out = new LinkedHashSet<>();
    for (String value : headerValues) {
      for (String name : value.split(",")) {
        String n = name.trim();
        if (n.isEmpty()) {
          continue;
        }
        if (!NAMES.contains(n)) {
          throw new S3Exception(
              S3ErrorCode.INVALID_ARGUMENT,
              "Invalid attribute name specified: '"
                  + n
                  + "'; "
                  + ATTRIBUTES_HEADER
                  + " names some of "
                  + String.join(", ", NAMES));
        }
        out.add(n);
      }
    }
    if (out.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "The "
              + ATTRIBUTES_HEADER
              + " header specifying the attributes to be retrieved is missing or empty: name at"
              + " least one of "
              + String.join(", ", NAMES));
    }
    return out;
  }

  /**
   * A paging header's value; one that is not a whole number of 0 or more is ignored, as S3 does.
   */
  private static int nonNegative(S3Request r, String header, int absent) {
    String v = r.header(header);
    if (v == null) {
      return absent;
    }
    try {
      int n = Integer.parseInt(v.trim());
      return n >= 0 ? n : absent;
    } catch (NumberFormatException e) {
      return absent;
    }
  }

  /** The parts after {@code marker}, {@code maxParts} at most. */
  static ObjectAttributesResult.Parts page(long[] lengths, int marker, int maxParts) {
    List<ObjectAttributesResult.Part> listed = new ArrayList<>();
    int number = marker >= lengths.length ? lengths.length + 1 : marker + 1;
    while (number <= lengths.length && listed.size() < maxParts) {
      listed.add(new ObjectAttributesResult.Part(number, lengths[number - 1]));
      number++;
    }
    boolean truncated = number <= lengths.length;
    int next = listed.isEmpty() ? marker : listed.get(listed.size() - 1).partNumber();
    return new ObjectAttributesResult.Parts(
        lengths.length, marker, next, maxParts, truncated, listed);
  }
}
