package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.http.HttpExchange;
import io.strata.proxy.xml.CorsConfiguration;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import java.io.IOException;
import java.util.List;

/**
 * A bucket's CORS configuration and the answers it gives: PutBucketCors, GetBucketCors and
 * DeleteBucketCors; the preflight {@code OPTIONS} a browser sends before a cross-origin request,
 * answered without authentication as S3 does (browsers send no credentials with it); and the CORS
 * headers of actual requests that carry {@code Origin}. The configuration is an extended attribute
 * of the bucket's folder, {@code strata.s3.cors}, holding the document GetBucketCors answers; it is
 * read through the status cache, so a request with {@code Origin} costs no master call.
 */
final class BucketCors {
  static final String XATTR = "strata.s3.cors";

  private final ProxyContext ctx;
  private final BucketDocument document;

  BucketCors(ProxyContext ctx) {
    this.ctx = ctx;
    this.document = new BucketDocument(ctx, XATTR);
  }

  void get(S3Request r) throws IOException {
    document.answer(
        r,
        () ->
            new S3Exception(
                S3ErrorCode.NO_SUCH_CORS_CONFIGURATION,
                "The CORS configuration does not exist: the bucket "
                    + r.bucket()
                    + " has none (PutBucketCors sets one)"));
  }

  void put(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkWriteOf(r.principal(), dir);
    byte[] body = UploadBody.document(r, S3XmlParser.MAX_CORS_BYTES, true);
    CorsConfiguration c = S3XmlParser.corsConfiguration(body);
    document.store(dir, S3XmlWriter.corsConfiguration(c));
    r.empty(HttpResponseStatus.OK, null);
  }

  void delete(S3Request r) throws IOException {
    document.delete(r);
  }

  /**
   * Answers a preflight: 200 with the headers of the first rule that allows its origin, method and
   * requested headers; 403 AccessForbidden when none does or the bucket has no configuration; 400
   * BadRequest without Origin or Access-Control-Request-Method.
   */
  void preflight(S3Request r) throws IOException {
    String origin = r.header("Origin");
    if (origin == null || origin.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.BAD_REQUEST,
          "Insufficient information: a CORS preflight request needs the Origin header");
    }
    String method = r.header("Access-Control-Request-Method");
    if (method == null || method.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.BAD_REQUEST,
          "Insufficient information: a CORS preflight request needs the"
              + " Access-Control-Request-Method header, naming the method of the request to come");
    }
    if (r.bucket() == null) {
      throw forbidden("the service endpoint has no CORS configuration; send it to a bucket");
    }
    CorsConfiguration c = configuration(BucketOperations.bucketFolder(ctx, r));
    if (c == null) {
      throw forbidden(
          "the bucket " + r.bucket() + " has no CORS configuration (PutBucketCors sets one)");
    }
    List<String> headers = CorsRules.requestedHeaders(r.header("Access-Control-Request-Headers"));
    CorsConfiguration.Rule rule = CorsRules.firstMatch(c, origin, method, headers);
    if (rule == null) {
      throw forbidden(
          "no CORS rule of the bucket "
              + r.bucket()
              + " allows the origin "
              + origin
              + " with the method "
              + method
              + (headers.isEmpty() ? "" : " and the headers " + String.join(", ", headers)));
    }
    r.empty(HttpResponseStatus.OK, CorsRules.responseHeaders(rule, origin, headers));
  }

  /**
   * Adds to the answer of an actual request with {@code Origin} the CORS headers of the first rule
   * that allows its origin and method; nothing when there is none, the bucket has no configuration
   * or does not exist (the request's own answer says so), or the cluster cannot tell now.
   */
  void addResponseHeaders(HttpExchange exchange, String bucket) {
    String origin = exchange.headers().get("Origin");
    if (origin == null || origin.isEmpty() || bucket == null) {
      return;
    }
    CorsConfiguration c;
    try {
      c = configuration(ctx.statuses().get(ctx.buckets().path(bucket)));
    } catch (StrataException | S3Exception e) {
      // The request itself meets the same failure and reports it.
      return;
    }
    if (c == null) {
      return;
    }
    String method = exchange.method().name();
    CorsConfiguration.Rule rule = CorsRules.firstMatch(c, origin, method, List.of());
    if (rule != null) {
      HttpHeaders h = CorsRules.responseHeaders(rule, origin, List.of());
      exchange.addResponseHeaders(h);
    }
  }

  /** The configuration a bucket's folder keeps, or null. */
  private static CorsConfiguration configuration(FileInfo dir) {
    ByteString document = dir.getDirectory() ? dir.getXattrsMap().get(XATTR) : null;
    return document == null ? null : S3XmlParser.corsConfiguration(document.toByteArray());
  }

  private static S3Exception forbidden(String why) {
    return new S3Exception(
        S3ErrorCode.ACCESS_FORBIDDEN,
        "CORSResponse: This CORS request is not allowed: "
            + why
            + ". A rule must allow its origin, method and requested headers.");
  }
}
