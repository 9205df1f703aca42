package io.strata.proxy.s3;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.proxy.access.Principal;
import io.strata.proxy.auth.AuthResult;
import io.strata.proxy.http.HttpExchange;

/**
 * One S3 request as the operations see it: who sends it, the bucket and key it names (decoded), its
 * query parameters, its headers and body, and the ways to answer it. Every answer carries the
 * request id, which error documents and the proxy's log name too.
 */
public final class S3Request {
  private final HttpExchange exchange;
  private final String requestId;
  private final String bucket;
  private final String key;
  private final QueryParams query;
  private final AuthResult auth;
  private final Principal principal;

  /** The headers operations read: the request's, or those a POST form's fields stand for. */
  private final HttpHeaders headers;

  S3Request(
      HttpExchange exchange,
      String requestId,
      String bucket,
      String key,
      QueryParams query,
      AuthResult auth,
      Principal principal) {
    this(exchange, requestId, bucket, key, query, auth, principal, exchange.headers());
  }

  /**
   * @param headers what the operation takes for the request's headers: a POST form's fields ({@link
   *     PostObjects}) stand for the headers of the PutObject it is
   */
  S3Request(
      HttpExchange exchange,
      String requestId,
      String bucket,
      String key,
      QueryParams query,
      AuthResult auth,
      Principal principal,
      HttpHeaders headers) {
    this.exchange = exchange;
    this.headers = headers;
    this.requestId = requestId;
    this.bucket = bucket;
    this.key = key;
    this.query = query;
    this.auth = auth;
    this.principal = principal;
  }

  public HttpExchange exchange() {
    return exchange;
  }

  public String requestId() {
    return requestId;
  }

  public String method() {
    return exchange.method().name();
  }

  /** The bucket, or null for a request to the service (ListBuckets). */
  public String bucket() {
    return bucket;
  }

  /** The object key, or null for a request to a bucket. */
  public String key() {
    return key;
  }

  public QueryParams query() {
    return query;
  }

  public HttpHeaders headers() {
    return headers;
  }

  public String header(String name) {
    return headers.get(name);
  }

  public AuthResult auth() {
    return auth;
  }

  public Principal principal() {
    return principal;
  }

  /** The resource error documents name: /bucket/key. */
  public String resource() {
    if (bucket == null) {
      return "/";
    }
    return key == null ? "/" + bucket : "/" + bucket + "/" + key;
  }

  /** Headers every answer carries. */
  public HttpHeaders baseHeaders() {
    HttpHeaders h = new DefaultHttpHeaders();
    h.set("x-amz-request-id", requestId);
    h.set("x-amz-id-2", requestId);
    h.set("Date", HttpDates.format(System.currentTimeMillis()));
    h.set("Server", "Strata");
    return h;
  }

  /** Answers 200 with an XML document. */
  public void xml(byte[] document) {
    xml(document, null);
  }

  /** Answers 200 with an XML document and {@code extra} headers (null for none). */
  public void xml(byte[] document, HttpHeaders extra) {
    HttpHeaders h = baseHeaders();
    if (extra != null) {
      h.add(extra);
    }
    h.set("Content-Type", "application/xml");
    exchange.respond(HttpResponseStatus.OK, h, document);
  }

  /** Answers with a status and no body; {@code extra} may be null. */
  public void empty(HttpResponseStatus status, HttpHeaders extra) {
    HttpHeaders h = baseHeaders();
    if (extra != null) {
      h.add(extra);
    }
    exchange.respond(status, h, null);
  }
}
