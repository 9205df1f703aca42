package io.strata.proxy.s3;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.proxy.access.Principal;
import io.strata.proxy.auth.AuthResult;
import io.strata.proxy.auth.PayloadMode;
import io.strata.proxy.auth.SignatureVerifier;
import io.strata.proxy.auth.UriDecoding;
import io.strata.proxy.http.ExchangeHandler;
import io.strata.proxy.http.HttpExchange;
import io.strata.proxy.xml.ErrorResponse;
import io.strata.proxy.xml.S3XmlWriter;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The S3 front of the proxy: for each request it finds the bucket and key (path-style, or
 * virtual-host-style under {@code strata.proxy.domain}), checks the signature, tells the operation,
 * runs it, and turns every failure into S3's error document with the right status: the request's
 * own mistakes as their S3 codes, the cluster's answers translated (a missing path is NoSuchKey or
 * NoSuchBucket, an unreachable cluster or under store 503 SlowDown with the reason in the log),
 * anything unexpected 500 InternalError. Each request is counted per operation with its latency,
 * bytes in and out, and errors per code.
 */
public final class S3Service implements ExchangeHandler, ExchangeHandler.Overload {
  private static final Logger LOG = LoggerFactory.getLogger(S3Service.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ProxyContext ctx;
  private final SignatureVerifier verifier;
  private final String domain;
  private final MeterRegistry registry;
  private final BucketOperations buckets;
  private final ObjectReads reads;
  private final ObjectWrites writes;
  private final KeyListing listing;
  private final BucketPolicies policies;
  private final VersionListing versionListing;
  private final BucketVersioning versioning;
  private final MultipartUploads multipart;
  private final BucketTagging bucketTagging;
  private final BucketCors cors;
  private final BucketLifecycle lifecycle;
  private final ObjectAttributes attributes;
  private final PostObjects posts;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Map<Operation, OperationMeters> meters;

  public S3Service(
      ProxyContext ctx,
      SignatureVerifier verifier,
      String domain,
      MultipartUploads multipart,
      LifecycleSweep sweep,
      MeterRegistry registry) {
    this.ctx = ctx;
    this.verifier = verifier;
    this.domain = domain == null ? "" : domain.toLowerCase(Locale.ROOT);
    this.registry = registry;
    this.buckets = new BucketOperations(ctx);
    this.reads = new ObjectReads(ctx);
    this.writes = new ObjectWrites(ctx);
    this.listing = new KeyListing(ctx);
    this.policies = new BucketPolicies(ctx);
    this.versionListing = new VersionListing(ctx, listing);
    this.versioning = new BucketVersioning(ctx);
    this.multipart = multipart;
    this.bucketTagging = new BucketTagging(ctx);
    this.cors = new BucketCors(ctx);
    this.lifecycle = new BucketLifecycle(ctx, sweep);
    this.attributes = new ObjectAttributes(ctx);
    this.posts = new PostObjects(verifier, Clock.systemUTC());
    this.meters = meters(registry);
  }

  @Override
  public void handle(HttpExchange exchange) {
    long start = System.nanoTime();
    String requestId = newRequestId();
    Operation op = Operation.UNSUPPORTED;
    S3Request r = null;
    String resource = "/";
    try {
      String uri = exchange.uri();
      int q = uri.indexOf('?');
      String rawPath = q < 0 ? uri : uri.substring(0, q);
      String rawQuery = q < 0 ? "" : uri.substring(q + 1);
      String host = exchange.headers().get("Host");
      BucketAndKey named = bucketAndKey(rawPath, host);
      resource = named.resource();
      if (exchange.method().name().equals("OPTIONS")) {
        // A browser's preflight carries no credentials: it is answered before authentication.
        op = Operation.CORS_PREFLIGHT;
        cors.preflight(
            new S3Request(
                exchange,
                requestId,
                named.bucket(),
                named.key(),
                QueryParams.parse(rawQuery, false),
                null,
                Principal.ANONYMOUS));
        return;
      }
      cors.addResponseHeaders(exchange, named.bucket());
      AuthResult auth =
          verifier.verify(
              exchange.method().name(), rawPath, rawQuery, exchange.headers(), hostBucket(host));
      QueryParams query = QueryParams.parse(rawQuery, auth.queryPlusIsSpace());
      op =
          Operation.of(
              exchange.method().name(),
              named.bucket(),
              named.key(),
              query,
              exchange.headers().get("x-amz-copy-source") != null);
      refuseCustomerKeys(exchange.headers().names());
      String key = named.key();
      AuthResult acting = auth;
      PostObjects.Form form = null;
      if (op == Operation.POST_OBJECT) {
        // A browser's form names its key, and carries its credentials, in its body.
        if (!auth.anonymous() || auth.payloadMode() != PayloadMode.UNSIGNED) {
          throw new S3Exception(
              S3ErrorCode.INVALID_REQUEST,
              "A POST upload (an HTML form) is authenticated by its form's policy and signature"
                  + " fields: send it without an Authorization header, presigned query or"
                  + " x-amz-content-sha256");
        }
        form = posts.read(exchange, named.bucket());
        // A form's fields stand for a PUT's headers: the same refusal of customer keys.
        refuseCustomerKeys(form.fields().keySet());
        key = form.key();
        if (form.auth() != null) {
          acting = form.auth();
        }
      }
      Principal principal =
          policies.apply(
              op,
              named.bucket(),
              key,
              query,
              exchange.headers().get("x-amz-copy-source"),
              exchange.remoteAddress(),
              exchange.secure(),
              principal(acting));
      r =
          new S3Request(
              exchange,
              requestId,
              named.bucket(),
              key,
              query,
              acting,
              principal,
              form == null ? exchange.headers() : form.headers());
      String changing = changes(op, r);
      if (changing == null) {
        dispatch(op, r, form);
      } else {
        try (StatusCache.Write w = ctx.statuses().writing(changing)) {
          dispatch(op, r, form);
        }
      }
    } catch (S3Exception e) {
      fail(exchange, requestId, resource, op, e);
    } catch (StrataException e) {
      fail(exchange, requestId, resource, op, translate(e, r, op));
    } catch (IOException e) {
      LOG.info(
          "{} {} ({}) from {}: {}",
          op.s3Name(),
          resource,
          requestId,
          exchange.remote(),
          e.toString());
      fail(
          exchange,
          requestId,
          resource,
          op,
          new S3Exception(
              S3ErrorCode.INCOMPLETE_BODY,
              "The request failed while its body was read or its answer sent: " + e.getMessage()));
    } catch (RuntimeException e) {
      LOG.warn("{} {} ({}) failed", op.s3Name(), resource, requestId, e);
      fail(
          exchange,
          requestId,
          resource,
          op,
          new S3Exception(S3ErrorCode.INTERNAL_ERROR, "We encountered an internal error: " + e));
    } finally {
      OperationMeters m = meters.get(op);
      m.requests().record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      m.received().increment(exchange.bytesIn());
      m.sent().increment(exchange.bytesOut());
    }
  }

  /**
   * Objects are stored as they come and the cluster has no place for a customer's key, so a request
   * that asks for encryption with one (SSE-C), or for reading a copy source encrypted with one, is
   * refused rather than served as if the key had been used.
   */
  private static void refuseCustomerKeys(Set<String> names) {
    for (String name : names) {
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.startsWith("x-amz-server-side-encryption-customer-")
          || lower.startsWith("x-amz-copy-source-server-side-encryption-customer-")) {
        throw new S3Exception(
            S3ErrorCode.NOT_IMPLEMENTED,
            "Server-side encryption with customer-provided keys (header "
                + name
                + ") is not implemented: objects are stored unencrypted by the proxy; send the"
                + " request without the x-amz-server-side-encryption-customer-* headers, or"
                + " encrypt the data in the client");
      }
    }
  }

  /** The meters of one operation, made once so that a request does no lookup by name. */
  private record OperationMeters(Timer requests, Counter received, Counter sent) {}

  private Map<Operation, OperationMeters> meters(MeterRegistry registry) {
    Map<Operation, OperationMeters> m = new java.util.EnumMap<>(Operation.class);
    for (Operation op : Operation.values()) {
      String name = op.s3Name();
      m.put(
          op,
          new OperationMeters(
              Timer.builder(MetricNames.PROXY_REQUESTS)
                  .description("S3 requests served, by operation")
                  .tag(MetricNames.TAG_OPERATION, name)
                  .register(registry),
              counter(MetricNames.PROXY_BYTES_IN, name, null, "Request body bytes received"),
              counter(MetricNames.PROXY_BYTES_OUT, name, null, "Response body bytes sent")));
    }
    return m;
  }

  /**
   * @param form the form of a POST_OBJECT, read up to its file; null for any other operation
   */
  private void dispatch(Operation op, S3Request r, PostObjects.Form form) throws IOException {
    switch (op) {
      case LIST_BUCKETS -> buckets.listBuckets(r);
      case CREATE_BUCKET -> buckets.createBucket(r);
      case HEAD_BUCKET -> buckets.headBucket(r);
      case DELETE_BUCKET -> buckets.deleteBucket(r);
      case GET_BUCKET_LOCATION -> buckets.location(r);
      case GET_BUCKET_VERSIONING -> versioning.get(r);
      case PUT_BUCKET_VERSIONING -> versioning.put(r);
      case GET_BUCKET_ACL, GET_OBJECT_ACL -> buckets.getAcl(r);
      case PUT_BUCKET_ACL, PUT_OBJECT_ACL -> buckets.putAcl(r);
      case GET_BUCKET_POLICY -> policies.get(r);
      case PUT_BUCKET_POLICY -> policies.put(r);
      case DELETE_BUCKET_POLICY -> policies.delete(r);
      case GET_BUCKET_TAGGING -> bucketTagging.get(r);
      case PUT_BUCKET_TAGGING -> bucketTagging.put(r);
      case DELETE_BUCKET_TAGGING -> bucketTagging.delete(r);
      case GET_BUCKET_CORS -> cors.get(r);
      case PUT_BUCKET_CORS -> cors.put(r);
      case DELETE_BUCKET_CORS -> cors.delete(r);
      case GET_BUCKET_LIFECYCLE -> lifecycle.get(r);
      case PUT_BUCKET_LIFECYCLE -> lifecycle.put(r);
      case DELETE_BUCKET_LIFECYCLE -> lifecycle.delete(r);
      case GET_OBJECT_ATTRIBUTES -> attributes.get(r);
      case LIST_OBJECTS -> listing.listV1(r);
      case LIST_OBJECTS_V2 -> listing.listV2(r);
      case LIST_OBJECT_VERSIONS -> versionListing.list(r);
      case DELETE_OBJECTS -> writes.deleteObjects(r);
      case PUT_OBJECT -> writes.put(r);
      case POST_OBJECT -> writes.post(r, form);
      case COPY_OBJECT -> writes.copy(r);
      case GET_OBJECT -> reads.get(r, false);
      case HEAD_OBJECT -> reads.get(r, true);
      case DELETE_OBJECT -> writes.delete(r);
      case GET_OBJECT_TAGGING -> writes.getTagging(r);
      case PUT_OBJECT_TAGGING -> writes.putTagging(r);
      case DELETE_OBJECT_TAGGING -> writes.deleteTagging(r);
      case LIST_MULTIPART_UPLOADS -> multipart.listUploads(r);
      case CREATE_MULTIPART_UPLOAD -> multipart.create(r);
      case UPLOAD_PART -> multipart.uploadPart(r);
      case UPLOAD_PART_COPY -> multipart.uploadPartCopy(r);
      case COMPLETE_MULTIPART_UPLOAD -> multipart.complete(r);
      case ABORT_MULTIPART_UPLOAD -> multipart.abort(r);
      case LIST_PARTS -> multipart.listParts(r);
      default -> unsupported(r);
    }
  }

  /**
   * What an operation may change in the namespace, for the status cache: the object's path, the
   * bucket's whole subtree ("path/") for deletes (which remove emptied folders too), or null for
   * reads.
   */
  private String changes(Operation op, S3Request r) {
    switch (op) {
      case DELETE_OBJECT, DELETE_OBJECTS, DELETE_BUCKET, CREATE_BUCKET:
        return ctx.buckets().path(r.bucket()) + "/";
      case PUT_BUCKET_ACL,
      PUT_BUCKET_POLICY,
      DELETE_BUCKET_POLICY,
      PUT_BUCKET_TAGGING,
      DELETE_BUCKET_TAGGING,
      PUT_BUCKET_CORS,
      DELETE_BUCKET_CORS,
      PUT_BUCKET_LIFECYCLE,
      DELETE_BUCKET_LIFECYCLE,
      PUT_BUCKET_VERSIONING:
        return ctx.buckets().path(r.bucket());
      case PUT_OBJECT,
      POST_OBJECT,
      COPY_OBJECT,
      PUT_OBJECT_TAGGING,
      DELETE_OBJECT_TAGGING,
      PUT_OBJECT_ACL,
      COMPLETE_MULTIPART_UPLOAD:
        return r.key() == null ? null : ctx.buckets().objectPath(r.bucket(), r.key());
      default:
        return null;
    }
  }

  private static void unsupported(S3Request r) {
    for (String sub : Operation.UNSUPPORTED_SUBRESOURCES) {
      if (r.query().has(sub)) {
        throw new S3Exception(
            S3ErrorCode.NOT_IMPLEMENTED,
            "The '" + sub + "' sub-resource is" + " not implemented by Strata's S3 proxy");
      }
    }
    throw new S3Exception(
        S3ErrorCode.METHOD_NOT_ALLOWED,
        "The method " + r.method() + " is not allowed against " + r.resource());
  }

  /**
   * The bucket and key a request names: from the Host header when it is BUCKET.domain (virtual-host
   * style), else from the path's first segment (path style). A key is the rest of the path,
   * decoded; null when there is none.
   */
  BucketAndKey bucketAndKey(String rawPath, String host) {
    String path = rawPath.startsWith("/") ? rawPath.substring(1) : rawPath;
    String hostBucket = hostBucket(host);
    if (hostBucket != null) {
      return new BucketAndKey(hostBucket, path.isEmpty() ? null : UriDecoding.path(path));
    }
    if (path.isEmpty()) {
      return new BucketAndKey(null, null);
    }
    int slash = path.indexOf('/');
    String bucket = UriDecoding.path(slash < 0 ? path : path.substring(0, slash));
    String rawKey = slash < 0 ? "" : path.substring(slash + 1);
    return new BucketAndKey(bucket, rawKey.isEmpty() ? null : UriDecoding.path(rawKey));
  }

  /** The bucket and key a request names; either is null when it names none. */
  record BucketAndKey(String bucket, String key) {
    /** The resource as S3's error documents name it: {@code /}, {@code /bucket} or the key's. */
    String resource() {
      if (bucket == null) {
        return "/";
      }
      return key == null ? "/" + bucket : "/" + bucket + "/" + key;
    }
  }

  private String hostBucket(String host) {
    if (domain.isEmpty() || host == null) {
      return null;
    }
    String h = host.toLowerCase(Locale.ROOT);
    int colon = h.lastIndexOf(':');
    if (colon > 0 && h.indexOf(']') < colon) {
      h = h.substring(0, colon);
    }
    if (h.endsWith("." + domain) && h.length() > domain.length() + 1) {
      return h.substring(0, h.length() - domain.length() - 1);
    }
    return null;
  }

  private Principal principal(AuthResult auth) {
    if (auth.anonymous()) {
      return Principal.ANONYMOUS;
    }
    String user = auth.user();
    String primary = ctx.groups().primaryGroup(user);
    return new Principal(user, primary == null ? "" : primary, ctx.groups().groupsOf(user));
  }

  /** A cluster error as S3 reports it for this request. */
  static S3Exception translate(StrataException e, S3Request r, Operation op) {
    switch (e.code()) {
      case NOT_FOUND:
        if (r != null && r.key() != null) {
          return new S3Exception(
              S3ErrorCode.NO_SUCH_KEY, "The specified key does not exist: " + r.key());
        }
        return new S3Exception(S3ErrorCode.NO_SUCH_BUCKET, e.getMessage());
      case PERMISSION_DENIED:
        return new S3Exception(S3ErrorCode.ACCESS_DENIED, "Access Denied: " + e.getMessage());
      case INVALID_ARGUMENT:
        return new S3Exception(S3ErrorCode.INVALID_ARGUMENT, e.getMessage());
      case UNIMPLEMENTED:
        return new S3Exception(S3ErrorCode.NOT_IMPLEMENTED, e.getMessage());
      case RESOURCE_EXHAUSTED:
        // Not a request rate to lower: a worker's cache is full of blocks it must hold.
        LOG.warn(
            "{} {}: no room in the cluster: {}",
            op.s3Name(),
            r == null ? "" : r.resource(),
            e.getMessage());
        return new S3Exception(
            S3ErrorCode.SERVICE_UNAVAILABLE, "The service is unavailable:" + " " + e.getMessage());
      case UNAVAILABLE:
      case DEADLINE_EXCEEDED:
      case STALE:
        LOG.warn(
            "{} {}: the cluster did not answer: {}",
            op.s3Name(),
            r == null ? "" : r.resource(),
            e.getMessage());
        return new S3Exception(
            S3ErrorCode.SLOW_DOWN,
            "Please reduce your request rate: the"
                + " cluster is busy or unreachable ("
                + e.code()
                + "); retry");
      default:
        LOG.warn(
            "{} {} failed in the cluster: {}",
            op.s3Name(),
            r == null ? "" : r.resource(),
            e.getMessage(),
            e);
        return new S3Exception(
            S3ErrorCode.INTERNAL_ERROR, "We encountered an internal error: " + e.getMessage());
    }
  }

  private void fail(
      HttpExchange exchange, String requestId, String resource, Operation op, S3Exception e) {
    counter(MetricNames.PROXY_ERRORS, op.s3Name(), e.code().code(), "S3 error answers").increment();
    if (exchange.responseStarted()) {
      exchange.abort();
      return;
    }
    HttpResponseStatus status = HttpResponseStatus.valueOf(e.code().httpStatus());
    HttpHeaders h = new io.netty.handler.codec.http.DefaultHttpHeaders();
    h.set("x-amz-request-id", requestId);
    h.set("x-amz-id-2", requestId);
    h.set("Date", HttpDates.format(System.currentTimeMillis()));
    h.set("Server", "Strata");
    e.headers().forEach(h::set);
    if (e.code() == S3ErrorCode.NOT_MODIFIED) {
      exchange.respond(status, h, null);
      return;
    }
    if (LOG.isDebugEnabled()) {
      LOG.debug(
          "{} {} ({}): {} {}", op.s3Name(), resource, requestId, e.code().code(), e.getMessage());
    }
    h.set("Content-Type", "application/xml");
    boolean head = exchange.method().name().equals("HEAD");
    byte[] body = S3XmlWriter.error(ErrorResponse.of(e, resource, requestId));
    if (head) {
      // HEAD answers carry no body; clients read the status alone.
      h.set("Content-Length", "0");
    }
    exchange.respond(status, h, head ? null : body);
  }

  private Counter counter(String name, String operation, String code, String description) {
    String key = name + "|" + operation + "|" + code;
    return counters.computeIfAbsent(
        key,
        k -> {
          Counter.Builder b =
              Counter.builder(name)
                  .description(description)
                  .tag(MetricNames.TAG_OPERATION, operation);
          if (code != null) {
            b.tag(MetricNames.TAG_CODE, code);
          } else {
            b.baseUnit("bytes");
          }
          return b.register(registry);
        });
  }

  @Override
  public void reject(HttpExchange exchange) {
    fail(
        exchange,
        newRequestId(),
        "/",
        Operation.UNSUPPORTED,
        new S3Exception(
            S3ErrorCode.SLOW_DOWN,
            "Please reduce your request rate: every handler thread is busy"
                + " and the queue is full (strata.proxy.handler.threads, strata.proxy.handler.queue)"));
  }

  private static String newRequestId() {
    byte[] b = new byte[8];
    RANDOM.nextBytes(b);
    return HexFormat.of().withUpperCase().formatHex(b);
  }
}
