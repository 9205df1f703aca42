package io.strata.underfs.s3;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.file.NoSuchFileException;
import org.apache.http.conn.ConnectTimeoutException;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.SdkException;

/**
 * Turns AWS SDK failures into the exceptions of the under-store contract, each naming the S3
 * server, the path and what the user can do: a missing key is a {@link NoSuchFileException};
 * missing credentials, a refused signature, a missing bucket and an unreachable server are {@link
 * StrataException}s with PERMISSION_DENIED, NOT_FOUND and UNAVAILABLE. Anything else is an {@link
 * IOException} carrying S3's own error code and request id.
 */
final class S3Errors {
  private final String endpoint;

  /**
   * @param endpoint how messages name the server: its URL, or AWS's host for the region
   */
  S3Errors(String endpoint) {
    this.endpoint = endpoint;
  }

  String endpoint() {
    return endpoint;
  }

  /**
   * The exception to throw for a failed request.
   *
   * @param action what was being done, as in "while reading s3://b/k"
   * @param uri the path the request was about
   */
  IOException translate(String action, String uri, SdkException e) {
    if (e instanceof AwsServiceException service) {
      return translateService(action, uri, service);
    }
    if (e instanceof AbortedException || Thread.currentThread().isInterrupted()) {
      InterruptedIOException interrupted =
          new InterruptedIOException(
              "Interrupted while " + action + " " + uri + " on S3 at " + endpoint);
      interrupted.initCause(e);
      return interrupted;
    }
    if (hasCause(e, S3Credentials.Missing.class)) {
      return new StrataException(
          ErrorCode.PERMISSION_DENIED,
          "No credentials for "
              + uri
              + ": set the mount options s3.access.key and s3.secret.key, or AWS_ACCESS_KEY_ID /"
              + " AWS_SECRET_ACCESS_KEY for the master and workers",
          e);
    }
    if (isUnreachable(e)) {
      return new StrataException(
          ErrorCode.UNAVAILABLE,
          "Cannot reach S3 at "
              + endpoint
              + ": check s3.endpoint and that the server is running (while "
              + action
              + " "
              + uri
              + ")",
          e);
    }
    return new IOException(
        "S3 at " + endpoint + " failed while " + action + " " + uri + ": " + e.getMessage(), e);
  }

  private IOException translateService(String action, String uri, AwsServiceException e) {
    String code = errorCode(e);
    int status = e.statusCode();
    if (code.equals("NoSuchBucket")) {
      return noSuchBucket(action, uri, e);
    }
    if (status == 403
        || code.equals("AccessDenied")
        || code.equals("InvalidAccessKeyId")
        || code.equals("SignatureDoesNotMatch")) {
      return new StrataException(
          ErrorCode.PERMISSION_DENIED,
          "Access denied by S3 at "
              + endpoint
              + " for "
              + uri
              + ": check the access and secret keys (mount options "
              + "s3.access.key / s3.secret.key, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)"
              + detail(e),
          e);
    }
    if (code.equals("NoSuchKey") || code.equals("NoSuchUpload") || status == 404) {
      NoSuchFileException missing = new NoSuchFileException(uri);
      missing.initCause(e);
      return missing;
    }
    return new IOException(
        "S3 at "
            + endpoint
            + " failed while "
            + action
            + " "
            + uri
            + detail(e)
            + (status == 503 || code.equals("SlowDown")
                ? ": the server is throttling requests; lower the load or raise s3.retry.max.attempts"
                : ""),
        e);
  }

  /** The NOT_FOUND failure for a bucket that does not exist. */
  StrataException noSuchBucket(String action, String uri, Throwable cause) {
    String bucket = S3Location.parse(uri).bucket();
    return new StrataException(
        ErrorCode.NOT_FOUND,
        "S3 bucket '"
            + bucket
            + "' does not exist at "
            + endpoint
            + ": create it or fix the mount URI (while "
            + action
            + " "
            + uri
            + ")",
        cause);
  }

  /** Whether a failure is S3 saying that the bucket does not exist. */
  static boolean isNoSuchBucket(SdkException e) {
    return e instanceof AwsServiceException service && errorCode(service).equals("NoSuchBucket");
  }

  /**
   * Whether a failure is a 404 of a HEAD, which carries no error code to tell key and bucket apart.
   */
  static boolean isNotFound(SdkException e) {
    return e instanceof AwsServiceException service && service.statusCode() == 404;
  }

  /** Whether a ranged GET started at or past the end of the object. */
  static boolean isRangeNotSatisfiable(SdkException e) {
    return e instanceof AwsServiceException service
        && (service.statusCode() == 416 || errorCode(service).equals("InvalidRange"));
  }

  private static String errorCode(AwsServiceException e) {
    String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    return code == null ? "" : code;
  }

  private static String detail(AwsServiceException e) {
    String message = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorMessage();
    String said = (errorCode(e) + " " + (message == null ? "" : message)).trim();
    return " [S3 said: "
        + (said.isEmpty() ? "nothing" : said)
        + "; HTTP "
        + e.statusCode()
        + ", request id "
        + e.requestId()
        + "]";
  }

  private static boolean isUnreachable(Throwable e) {
    return hasCause(e, ConnectException.class)
        || hasCause(e, UnknownHostException.class)
        || hasCause(e, NoRouteToHostException.class)
        || hasCause(e, ConnectTimeoutException.class);
  }

  private static boolean hasCause(Throwable e, Class<? extends Throwable> kind) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (kind.isInstance(t)) {
        return true;
      }
    }
    return false;
  }
}
