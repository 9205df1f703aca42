package io.strata.proxy.auth;

import java.util.List;

/**
 * Who a verified request acts as, and what its body must still satisfy. A request's headers, path
 * and query are fully checked when an {@code AuthResult} exists; its body is not: the caller checks
 * it as {@link #payloadMode()} says before it keeps anything the body carried.
 */
public final class AuthResult {
  private final String user;
  private final String accessKey;
  private final PayloadMode payloadMode;
  private final String expectedPayloadSha256;
  private final ChunkSigner chunkSigner;
  private final List<String> declaredTrailers;
  private final long decodedContentLength;
  private final boolean queryPlusIsSpace;
  private final boolean presigned;

  AuthResult(
      String user,
      String accessKey,
      PayloadMode payloadMode,
      String expectedPayloadSha256,
      ChunkSigner chunkSigner,
      List<String> declaredTrailers,
      long decodedContentLength,
      boolean queryPlusIsSpace,
      boolean presigned) {
    this.user = user;
    this.accessKey = accessKey;
    this.payloadMode = payloadMode;
    this.expectedPayloadSha256 = expectedPayloadSha256;
    this.chunkSigner = chunkSigner;
    this.declaredTrailers = List.copyOf(declaredTrailers);
    this.decodedContentLength = decodedContentLength;
    this.queryPlusIsSpace = queryPlusIsSpace;
    this.presigned = presigned;
  }

  /**
   * A browser form whose policy the access key signed (POST Object): the form's fields are checked
   * against the policy afterwards, and its file is unsigned.
   */
  static AuthResult signedForm(String user, String accessKey) {
    return new AuthResult(
        user, accessKey, PayloadMode.UNSIGNED, null, null, List.of(), -1, true, false);
  }

  /** The Strata user the request acts as, or null for an anonymous request. */
  public String user() {
    return user;
  }

  public boolean anonymous() {
    return user == null;
  }

  /** The access key that signed the request, or null for an anonymous request. */
  public String accessKey() {
    return accessKey;
  }

  public PayloadMode payloadMode() {
    return payloadMode;
  }

  /**
   * The lower-case hex SHA-256 the body must have in mode {@link PayloadMode#SIGNED_SHA256}, else
   * null. A body that differs is answered with {@code XAmzContentSHA256Mismatch}.
   */
  public String expectedPayloadSha256() {
    return expectedPayloadSha256;
  }

  /** The chunk signature chain for the signed streaming modes, else null. */
  public ChunkSigner chunkSigner() {
    return chunkSigner;
  }

  /** The trailer names {@code x-amz-trailer} announced, in lower case; empty when none. */
  public List<String> declaredTrailers() {
    return declaredTrailers;
  }

  /**
   * The payload length {@code x-amz-decoded-content-length} announced for an aws-chunked body, or
   * -1 when absent.
   */
  public long decodedContentLength() {
    return decodedContentLength;
  }

  /**
   * How a {@code +} in the raw query must be read: true for a space, false for a plus sign. Clients
   * differ here, and the signature tells which one this client meant: the caller decodes query
   * parameters accordingly, or it would act on parameters other than those signed. True when the
   * question did not arise (no {@code +}, or no signature).
   */
  public boolean queryPlusIsSpace() {
    return queryPlusIsSpace;
  }

  /** Authenticated by query parameters (a presigned URL) rather than a header. */
  public boolean presigned() {
    return presigned;
  }

  @Override
  public String toString() {
    return "AuthResult[user="
        + user
        + ", accessKey="
        + accessKey
        + ", payload="
        + payloadMode
        + (presigned ? ", presigned" : "")
        + "]";
  }
}
