package io.strata.proxy.s3;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.proxy.auth.AuthResult;
import io.strata.proxy.auth.SignatureVerifier;
import io.strata.proxy.checksum.BodyDigests;
import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.http.HttpExchange;
import io.strata.proxy.http.MultipartFormReader;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import io.strata.proxy.xml.TagSet;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * POST Object: a browser's upload through an HTML form, {@code POST /bucket} with a {@code
 * multipart/form-data} body whose fields stand for PutObject's key and headers, followed by the
 * file. The fields before the file are read (at most {@link #MAX_FIELDS_BYTES}, as S3 bounds them)
 * and the form's signature and policy checked ({@link SignatureVerifier#verifyPostForm}, {@link
 * PostPolicy}) before a byte of the file is; the file then streams to its object as a PUT's body
 * does ({@link ObjectWrites#post}), counted against the policy's content-length-range so that a
 * file past its bound is refused without an object left behind. Fields after the file are ignored,
 * as S3 ignores them. A form without a policy and signature acts as an unsigned request.
 */
final class PostObjects {
  /** S3's bound on a form's fields and boundaries before its file. */
  static final int MAX_FIELDS_BYTES = 20 << 10;

  /** What is read and dropped of a body after its file, so that the connection can be reused. */
  private static final long MAX_DRAIN_BYTES = 64 << 10;

  /** Fields whose value is taken exactly as sent: {@code ${filename}} is not replaced in them. */
  private static final Set<String> VERBATIM_FIELDS =
      Set.of(
          "policy",
          "x-amz-signature",
          "x-amz-credential",
          "x-amz-algorithm",
          "x-amz-date",
          "signature",
          "awsaccesskeyid");

  /** Fields that become the PutObject header of the same name. */
  private static final List<String> HEADER_FIELDS =
      List.of(
          "content-type",
          "content-encoding",
          "content-disposition",
          "content-language",
          "cache-control",
          "expires",
          "content-md5",
          ChecksumAlgorithm.ALGORITHM_HEADER);

  private final SignatureVerifier verifier;
  private final Clock clock;

  PostObjects(SignatureVerifier verifier, Clock clock) {
    this.verifier = verifier;
    this.clock = clock;
  }

  /**
   * A form read up to its file, its signature and policy checked.
   *
   * @param fields the fields before the file, names in lower case, {@code ${filename}} replaced;
   *     repeated fields joined by commas, as S3's policy checks see them
   * @param auth who the form acts as; null for an unsigned form
   * @param policy its policy; null for an unsigned form
   */
  record Form(
      Map<String, String> fields,
      String key,
      MultipartFormReader reader,
      MultipartFormReader.Part file,
      AuthResult auth,
      PostPolicy policy,
      HttpHeaders headers) {
    /** What the policy allows the file's length to be; null when it sets no range. */
    PostPolicy.LengthRange lengthRange() {
      return policy == null ? null : policy.lengthRange();
    }

    /** A field by name in any case; null when the form has none. */
    String field(String name) {
      return fields.get(name.toLowerCase(Locale.ROOT));
    }
  }

  /**
   * Reads a form up to its file and checks it: its type, its fields, its signature (who it acts
   * as), its policy's expiration and conditions.
   *
   * @throws S3Exception PreconditionFailed for a body that is not multipart/form-data,
   *     MalformedPOSTRequest for one that is not well-formed, InvalidArgument for a missing key or
   *     file, the signature's and the policy's refusals
   */
  Form read(HttpExchange exchange, String bucket) throws IOException {
    String contentType = exchange.headers().get("Content-Type");
    if (!MultipartFormReader.isFormData(contentType)) {
      throw new S3Exception(
              S3ErrorCode.PRECONDITION_FAILED,
              "At least one of the pre-conditions you specified did not hold: Bucket POST must be"
                  + " of the enclosure-type multipart/form-data (the Content-Type is "
                  + (contentType == null ? "missing" : "'" + contentType + "'")
                  + ")")
          .withDetail("Condition", "Bucket POST must be of the enclosure-type multipart/form-data");
    }
    String boundary = MultipartFormReader.boundary(contentType);
    if (boundary == null) {
      throw new S3Exception(
          S3ErrorCode.MALFORMED_POST_REQUEST,
          "The body of your POST request is not well-formed multipart/form-data: the Content-Type"
              + " has no boundary of 1 to 70 characters: '"
              + contentType
              + "'");
    }
    MultipartFormReader reader = new MultipartFormReader(exchange.body(), boundary);
    Map<String, String> fields = new LinkedHashMap<>();
    MultipartFormReader.Part file;
    try {
      file = readFields(reader, fields);
    } catch (MultipartFormReader.MalformedException e) {
      throw malformed(e);
    }
    if (file == null) {
      throw new S3Exception(
              S3ErrorCode.INVALID_ARGUMENT,
              "POST requires exactly one file upload per request: the form has no field named"
                  + " 'file'")
          .withDetail("ArgumentName", "file")
          .withDetail("ArgumentValue", "0");
    }
    String key = fields.get("key");
    if (key == null) {
      throw new S3Exception(
              S3ErrorCode.INVALID_ARGUMENT,
              "Bucket POST must contain a field named 'key'.  If it is specified, please check the"
                  + " order of the fields.")
          .withDetail("ArgumentName", "key")
          .withDetail("ArgumentValue", "");
    }
    String filename = baseName(file.filename());
    for (Map.Entry<String, String> f : fields.entrySet()) {
      if (!VERBATIM_FIELDS.contains(f.getKey())) {
        f.setValue(f.getValue().replace("${filename}", filename));
      }
    }
    key = fields.get("key");
    AuthResult auth = verifier.verifyPostForm(fields);
    PostPolicy policy = null;
    if (auth != null) {
      policy = PostPolicy.parse(fields.get("policy"));
      policy.checkExpiration(clock.instant());
      Map<String, String> checked = new LinkedHashMap<>(fields);
      // The bucket is the one the request is sent to, whatever a field says.
      checked.put("bucket", bucket);
      policy.checkFields(checked);
    }
    return new Form(fields, key, reader, file, auth, policy, headers(fields));
  }

  /**
   * Reads the fields before the file into {@code fields}.
   *
   * @return the file's part; null when the form ends without one
   */
  private static MultipartFormReader.Part readFields(
      MultipartFormReader reader, Map<String, String> fields) throws IOException {
    MultipartFormReader.Part part;
    while ((part = reader.next()) != null) {
      String name = part.name().toLowerCase(Locale.ROOT);
      if (name.equals("file")) {
        if (reader.position() > MAX_FIELDS_BYTES) {
          throw tooManyFieldBytes();
        }
        return part;
      }
      long left = MAX_FIELDS_BYTES - reader.position();
      if (left < 0) {
        throw tooManyFieldBytes();
      }
      String value;
      try {
        value = part.text((int) left);
      } catch (MultipartFormReader.TooLongException e) {
        throw tooManyFieldBytes();
      }
      // Repeated fields are one value, comma-separated, as S3's policy checks take them.
      fields.merge(name, value, (a, b) -> a + "," + b);
    }
    return null;
  }

  /**
   * The PutObject headers a form's fields stand for: the standard headers S3 keeps, {@code
   * x-amz-meta-*}, {@code acl} as {@code x-amz-acl}, {@code tagging} (a {@code <Tagging>} document)
   * as {@code x-amz-tagging}, and {@code Content-MD5} and {@code x-amz-checksum-*}, which the file
   * is checked against. A value is kept as the UTF-8 bytes the form sent, as a header's bytes are.
   */
  static HttpHeaders headers(Map<String, String> fields) {
    HttpHeaders h = new DefaultHttpHeaders();
    for (Map.Entry<String, String> f : fields.entrySet()) {
      String name = f.getKey();
      String value = f.getValue();
      if (HEADER_FIELDS.contains(name)
          || name.startsWith(ObjectMetadata.META_HEADER_PREFIX)
          || name.startsWith(ChecksumAlgorithm.HEADER_PREFIX)) {
        h.add(headerName(name), headerValue(name, value));
      } else if (name.equals("acl")) {
        h.set("x-amz-acl", headerValue(name, value));
      } else if (name.equals("tagging")) {
        TagSet tags = S3XmlParser.tagging(value.getBytes(StandardCharsets.UTF_8));
        if (!tags.isEmpty()) {
          h.set("x-amz-tagging", headerValue(name, tags.toHeader()));
        }
      }
    }
    return h;
  }

  /** A field's name as a header's: refused unless it is an HTTP token, as a header name is. */
  private static String headerName(String field) {
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      boolean token =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!token) {
        throw new S3Exception(
                S3ErrorCode.INVALID_ARGUMENT,
                "The form field '"
                    + field
                    + "' cannot name a header: a header name has no spaces, separators or"
                    + " non-ASCII characters")
            .withDetail("ArgumentName", field);
      }
    }
    return field;
  }

  /** A field's value as the header that carries its UTF-8 bytes, one char a byte. */
  private static String headerValue(String field, String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        throw new S3Exception(
                S3ErrorCode.INVALID_ARGUMENT,
                "The form field '"
                    + field
                    + "' has a control character (such as a line break), which the header it"
                    + " stands for cannot carry")
            .withDetail("ArgumentName", field);
      }
    }
    return new String(value.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
  }

  /**
   * The flexible checksum a form names (x-amz-checksum-algorithm, or an x-amz-checksum-* value), or
   * null.
   */
  static ChecksumAlgorithm checksumAlgorithm(HttpHeaders headers) {
    List<String> names = new ArrayList<>();
    for (Map.Entry<String, String> e : headers) {
      names.add(e.getKey());
    }
    ChecksumAlgorithm byValue = ChecksumAlgorithm.fromHeaderNames(names).orElse(null);
    String named = headers.get(ChecksumAlgorithm.ALGORITHM_HEADER);
    ChecksumAlgorithm byName = named == null ? null : ChecksumAlgorithm.fromValue(named);
    if (byName != null && byValue != null && byName != byValue) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "The checksum algorithm "
              + named
              + " does not match the checksum given ("
              + byValue.headerName()
              + ")");
    }
    return byName != null ? byName : byValue;
  }

  /**
   * Copies the form's file to {@code out} as it arrives, feeding {@code digests}: refused as soon
   * as it passes the policy's content-length-range (or S3's largest object), and at its end when it
   * is shorter than the range allows.
   *
   * @return the file's length
   * @throws S3Exception EntityTooLarge, EntityTooSmall; MalformedPOSTRequest when the body ends
   *     before the file's closing boundary
   */
  static long copyFile(Form form, OutputStream out, BodyDigests digests) throws IOException {
    PostPolicy.LengthRange range = form.lengthRange();
    long max =
        range == null ? UploadBody.MAX_PUT_BYTES : Math.min(range.max(), UploadBody.MAX_PUT_BYTES);
    InputStream in = form.file().content();
    byte[] buf = new byte[64 << 10];
    long total = 0;
    try {
      int n;
      while ((n = in.read(buf, 0, buf.length)) >= 0) {
        total += n;
        if (total > max) {
          throw tooLarge(range, max);
        }
        digests.update(buf, 0, n);
        out.write(buf, 0, n);
      }
    } catch (MultipartFormReader.MalformedException e) {
      throw malformed(e);
    }
    if (range != null && total < range.min()) {
      throw new S3Exception(
              S3ErrorCode.ENTITY_TOO_SMALL,
              "Your proposed upload is smaller than the minimum allowed size: the policy's"
                  + " content-length-range "
                  + range.text()
                  + " allows no fewer than "
                  + range.min()
                  + " bytes and the file has "
                  + total)
          .withDetail("ProposedSize", Long.toString(total))
          .withDetail("MinSizeAllowed", Long.toString(range.min()));
    }
    return total;
  }

  /** Checks the file against the form's Content-MD5 and x-amz-checksum-* fields, if any. */
  static void verify(Form form, BodyDigests digests, ChecksumAlgorithm algorithm) {
    String md5 = form.headers().get("Content-MD5");
    if (md5 != null) {
      digests.verifyContentMd5(md5);
    }
    if (algorithm != null) {
      String expected = form.headers().get(algorithm.headerName());
      if (expected != null) {
        digests.verifyChecksum(algorithm, expected);
      }
    }
  }

  private static S3Exception tooLarge(PostPolicy.LengthRange range, long max) {
    S3Exception e =
        new S3Exception(
            S3ErrorCode.ENTITY_TOO_LARGE,
            "Your proposed upload exceeds the maximum allowed size: "
                + (range != null && range.max() == max
                    ? "the policy's content-length-range " + range.text() + " allows"
                    : "an object has")
                + " at most "
                + max
                + " bytes");
    return e.withDetail("MaxSizeAllowed", Long.toString(max));
  }

  /**
   * Answers a form's upload as it asks: a 303 redirect to {@code success_action_redirect} (or
   * {@code redirect}) with the bucket, key and ETag in its query, else the status {@code
   * success_action_status} names: 200 or 204 with no body, 201 with a {@code PostResponse}
   * document; 204 for anything else.
   */
  static void respond(S3Request r, Form form, String etag, String versionId) {
    // Fields after the file are ignored; reading them lets the connection serve another request.
    try {
      form.reader().drain(MAX_DRAIN_BYTES);
    } catch (IOException e) {
      // The object is stored: the connection closes after the answer instead.
    }
    HttpHeaders h = r.baseHeaders();
    String quoted = "\"" + etag + "\"";
    h.set("ETag", quoted);
    if (versionId != null) {
      h.set("x-amz-version-id", versionId);
    }
    String location = location(r);
    h.set("Location", location);
    String redirect = form.field("success_action_redirect");
    if (redirect == null || redirect.isEmpty()) {
      redirect = form.field("redirect");
    }
    URI target = redirectTarget(redirect);
    if (target != null) {
      String sep = target.getRawQuery() == null ? "?" : "&";
      String url =
          redirect
              + sep
              + "bucket="
              + encode(r.bucket())
              + "&key="
              + encode(r.key())
              + "&etag="
              + encode(quoted);
      h.set("Location", url);
      r.exchange().respond(HttpResponseStatus.SEE_OTHER, h, null);
      return;
    }
    String status = form.field("success_action_status");
    if ("201".equals(status)) {
      h.set("Content-Type", "application/xml");
      r.exchange()
          .respond(
              HttpResponseStatus.CREATED,
              h,
              S3XmlWriter.postResponse(location, r.bucket(), r.key(), etag));
    } else if ("200".equals(status)) {
      r.exchange().respond(HttpResponseStatus.OK, h, null);
    } else {
      r.exchange().respond(HttpResponseStatus.NO_CONTENT, h, null);
    }
  }

  /**
   * The URL a redirect field names, when it is an absolute http or https URL without a fragment;
   * null otherwise: S3 ignores a redirect it cannot interpret.
   */
  static URI redirectTarget(String redirect) {
    if (redirect == null || redirect.isEmpty()) {
      return null;
    }
    try {
      URI u = new URI(redirect);
      String scheme = u.getScheme();
      if (scheme == null
          || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
          || u.getHost() == null
          || u.getRawFragment() != null) {
        return null;
      }
      return u;
    } catch (URISyntaxException e) {
      return null;
    }
  }

  /**
   * The URL of the object, as the request addressed its bucket and over its scheme: {@code
   * http://host/bucket/key} path-style, {@code http://bucket.domain/key} virtual-host-style (the
   * request's path is then {@code /}).
   */
  private static String location(S3Request r) {
    String host = r.exchange().headers().get("Host");
    String uri = r.exchange().uri();
    int q = uri.indexOf('?');
    String rawPath = q < 0 ? uri : uri.substring(0, q);
    boolean virtualHost = rawPath.isEmpty() || rawPath.equals("/");
    String path = (virtualHost ? "/" : "/" + encodePath(r.bucket()) + "/") + encodePath(r.key());
    return host == null ? path : (r.exchange().secure() ? "https://" : "http://") + host + path;
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** A key as a URL path: each segment percent-encoded, the slashes kept. */
  private static String encodePath(String key) {
    return encode(key).replace("%2F", "/");
  }

  /**
   * The name of a file as S3 takes it for {@code ${filename}}: what follows the last slash or
   * backslash of what the browser sent; empty when it sent none.
   */
  static String baseName(String filename) {
    if (filename == null) {
      return "";
    }
    int cut = Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\'));
    return filename.substring(cut + 1);
  }

  private static S3Exception malformed(MultipartFormReader.MalformedException e) {
    return new S3Exception(
        S3ErrorCode.MALFORMED_POST_REQUEST,
        "The body of your POST request is not well-formed multipart/form-data: " + e.getMessage());
  }

  private static S3Exception tooManyFieldBytes() {
    return new S3Exception(
        S3ErrorCode.MAX_POST_PRE_DATA_LENGTH_EXCEEDED,
        "Your POST request fields preceding the upload file were too large: S3 takes at most "
            + MAX_FIELDS_BYTES
            + " bytes of fields and boundaries before the file");
  }
}
