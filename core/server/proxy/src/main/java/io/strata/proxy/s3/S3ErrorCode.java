package io.strata.proxy.s3;

/**
 * The S3 error codes the proxy answers with, each with the HTTP status S3 gives it and the message
 * S3 documents for it. The code's name is the {@code <Code>} of the error document.
 */
public enum S3ErrorCode {
  ACCESS_DENIED("AccessDenied", 403, "Access Denied"),
  ACCESS_FORBIDDEN("AccessForbidden", 403, "CORSResponse: This CORS request is not allowed."),
  BAD_REQUEST("BadRequest", 400, "Bad Request"),
  BAD_DIGEST(
      "BadDigest",
      400,
      "The Content-MD5 or checksum you specified did not match what we received."),
  BUCKET_ALREADY_EXISTS("BucketAlreadyExists", 409, "The requested bucket name is not available."),
  BUCKET_ALREADY_OWNED_BY_YOU(
      "BucketAlreadyOwnedByYou",
      409,
      "Your previous request to create the named bucket succeeded and you already own it."),
  BUCKET_NOT_EMPTY("BucketNotEmpty", 409, "The bucket you tried to delete is not empty."),
  ENTITY_TOO_LARGE(
      "EntityTooLarge", 400, "Your proposed upload exceeds the maximum allowed object size."),
  ENTITY_TOO_SMALL(
      "EntityTooSmall",
      400,
      "Your proposed upload is smaller than the minimum allowed object size."),
  EXPIRED_TOKEN("ExpiredToken", 400, "The provided token has expired."),
  INCOMPLETE_BODY(
      "IncompleteBody",
      400,
      "You did not provide the number of bytes specified by the Content-Length HTTP header."),
  INTERNAL_ERROR("InternalError", 500, "We encountered an internal error. Please try again."),
  INVALID_ACCESS_KEY_ID(
      "InvalidAccessKeyId",
      403,
      "The AWS access key ID you provided does not exist in our records."),
  INVALID_ARGUMENT("InvalidArgument", 400, "Invalid Argument"),
  INVALID_BUCKET_NAME("InvalidBucketName", 400, "The specified bucket is not valid."),
  INVALID_DIGEST("InvalidDigest", 400, "The Content-MD5 or checksum you specified is not valid."),
  INVALID_PART(
      "InvalidPart",
      400,
      "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag."),
  INVALID_PART_NUMBER("InvalidPartNumber", 416, "The requested partnumber is not satisfiable"),
  INVALID_PART_ORDER(
      "InvalidPartOrder",
      400,
      "The list of parts was not in ascending order. The parts list must be specified in order by part number."),
  INVALID_RANGE("InvalidRange", 416, "The requested range is not satisfiable"),
  INVALID_REQUEST("InvalidRequest", 400, "Invalid Request"),
  INVALID_STORAGE_CLASS(
      "InvalidStorageClass", 400, "The storage class you specified is not valid."),
  KEY_TOO_LONG("KeyTooLongError", 400, "Your key is too long."),
  MALFORMED_ACL_ERROR(
      "MalformedACLError",
      400,
      "The XML you provided was not well-formed or did not validate against our published schema."),
  MALFORMED_POLICY("MalformedPolicy", 400, "Policy has invalid resource."),
  MALFORMED_POST_REQUEST(
      "MalformedPOSTRequest",
      400,
      "The body of your POST request is not well-formed multipart/form-data."),
  MAX_POST_PRE_DATA_LENGTH_EXCEEDED(
      "MaxPostPreDataLengthExceededError",
      400,
      "Your POST request fields preceding the upload file were too large."),
  INVALID_POLICY_DOCUMENT(
      "InvalidPolicyDocument",
      400,
      "The content of the form does not meet the conditions specified in the policy document."),
  MALFORMED_XML(
      "MalformedXML",
      400,
      "The XML you provided was not well-formed or did not validate against our published schema."),
  METADATA_TOO_LARGE(
      "MetadataTooLarge", 400, "Your metadata headers exceed the maximum allowed metadata size."),
  METHOD_NOT_ALLOWED(
      "MethodNotAllowed", 405, "The specified method is not allowed against this resource."),
  MISSING_CONTENT_LENGTH(
      "MissingContentLength", 411, "You must provide the Content-Length HTTP header."),
  MISSING_SECURITY_HEADER(
      "MissingSecurityHeader", 400, "Your request is missing a required header."),
  NO_SUCH_BUCKET("NoSuchBucket", 404, "The specified bucket does not exist."),
  NO_SUCH_KEY("NoSuchKey", 404, "The specified key does not exist."),
  NO_SUCH_UPLOAD(
      "NoSuchUpload",
      404,
      "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed."),
  NO_SUCH_VERSION("NoSuchVersion", 404, "The specified version does not exist."),
  NO_SUCH_TAG_SET("NoSuchTagSet", 404, "The TagSet does not exist."),
  NO_SUCH_BUCKET_POLICY("NoSuchBucketPolicy", 404, "The bucket policy does not exist."),
  NO_SUCH_CORS_CONFIGURATION(
      "NoSuchCORSConfiguration", 404, "The CORS configuration does not exist."),
  NO_SUCH_LIFECYCLE_CONFIGURATION(
      "NoSuchLifecycleConfiguration", 404, "The lifecycle configuration does not exist."),
  NOT_IMPLEMENTED(
      "NotImplemented",
      501,
      "A header or query you provided implies functionality that is not implemented."),
  NOT_MODIFIED("NotModified", 304, "Not Modified"),
  PRECONDITION_FAILED(
      "PreconditionFailed", 412, "At least one of the preconditions you specified did not hold."),
  REQUEST_TIME_TOO_SKEWED(
      "RequestTimeTooSkewed",
      403,
      "The difference between the request time and the server's time is too large."),
  SIGNATURE_DOES_NOT_MATCH(
      "SignatureDoesNotMatch",
      403,
      "The request signature we calculated does not match the signature you provided. Check your key and signing method."),
  AUTHORIZATION_HEADER_MALFORMED(
      "AuthorizationHeaderMalformed", 400, "The authorization header is malformed."),
  AUTHORIZATION_QUERY_PARAMETERS_ERROR(
      "AuthorizationQueryParametersError", 400, "Error parsing the X-Amz-Credential parameter."),
  SLOW_DOWN("SlowDown", 503, "Please reduce your request rate."),
  SERVICE_UNAVAILABLE("ServiceUnavailable", 503, "The service is unavailable. Please retry."),
  XAMZ_CONTENT_SHA256_MISMATCH(
      "XAmzContentSHA256Mismatch",
      400,
      "The provided 'x-amz-content-sha256' header does not match what was computed."),
  KEY_CONFLICT(
      "KeyConflict", 409, "The key names a folder where a file is, or a file where a folder is."),
  INVALID_TAG("InvalidTag", 400, "The tag provided was not a valid tag.");

  private final String code;
  private final int httpStatus;
  private final String defaultMessage;

  S3ErrorCode(String code, int httpStatus, String defaultMessage) {
    this.code = code;
    this.httpStatus = httpStatus;
    this.defaultMessage = defaultMessage;
  }

  /** The {@code <Code>} of the error document, as S3 spells it. */
  public String code() {
    return code;
  }

  public int httpStatus() {
    return httpStatus;
  }

  public String defaultMessage() {
    return defaultMessage;
  }
}
