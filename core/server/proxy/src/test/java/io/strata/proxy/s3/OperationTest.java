package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Requests map to the operation S3's API reference names, copies included. */
class OperationTest {
  private static Operation of(String method, String key, String query, boolean copySource) {
    return Operation.of(method, "b", key, QueryParams.parse(query, false), copySource);
  }

  @Test
  void aPutWithACopySourceIsACopy() {
    assertEquals(Operation.PUT_OBJECT, of("PUT", "k", "", false));
    assertEquals(Operation.COPY_OBJECT, of("PUT", "k", "", true));
    assertEquals(Operation.UPLOAD_PART, of("PUT", "k", "partNumber=1&uploadId=u", false));
    assertEquals(Operation.UPLOAD_PART_COPY, of("PUT", "k", "partNumber=1&uploadId=u", true));
    assertEquals("CopyObject", Operation.COPY_OBJECT.s3Name());
    assertEquals("UploadPartCopy", Operation.UPLOAD_PART_COPY.s3Name());
  }

  @Test
  void otherRequestsAreUnchangedByACopySource() {
    assertEquals(Operation.GET_OBJECT, of("GET", "k", "", true));
    assertEquals(Operation.PUT_OBJECT_TAGGING, of("PUT", "k", "tagging", true));
    assertEquals(Operation.CREATE_BUCKET, of("PUT", null, "", false));
    assertEquals(Operation.LIST_OBJECTS_V2, of("GET", null, "list-type=2", false));
  }

  @Test
  void theVersionsSubresourceOfABucketListsObjectVersions() {
    assertEquals(Operation.LIST_OBJECT_VERSIONS, of("GET", null, "versions", false));
    assertEquals(
        Operation.LIST_OBJECT_VERSIONS, of("GET", null, "versions&key-marker=a&max-keys=2", false));
    assertEquals("ListObjectVersions", Operation.LIST_OBJECT_VERSIONS.s3Name());
    assertEquals(Operation.UNSUPPORTED, of("PUT", null, "versions", false));
    assertEquals(Operation.UNSUPPORTED, of("DELETE", null, "versions", false));
    assertEquals(Operation.UNSUPPORTED, of("GET", "k", "versions", false));
  }

  @Test
  void bucketTaggingCorsAndObjectAttributesHaveTheirOperations() {
    assertEquals(Operation.GET_BUCKET_TAGGING, of("GET", null, "tagging", false));
    assertEquals(Operation.PUT_BUCKET_TAGGING, of("PUT", null, "tagging", false));
    assertEquals(Operation.DELETE_BUCKET_TAGGING, of("DELETE", null, "tagging", false));
    assertEquals(Operation.GET_BUCKET_CORS, of("GET", null, "cors", false));
    assertEquals(Operation.PUT_BUCKET_CORS, of("PUT", null, "cors", false));
    assertEquals(Operation.DELETE_BUCKET_CORS, of("DELETE", null, "cors", false));
    assertEquals(Operation.GET_OBJECT_ATTRIBUTES, of("GET", "k", "attributes", false));
    assertEquals(Operation.CORS_PREFLIGHT, of("OPTIONS", "k", "", false));
    assertEquals(Operation.CORS_PREFLIGHT, of("OPTIONS", null, "", false));
    assertEquals(Operation.UNSUPPORTED, of("GET", "k", "cors", false));
    assertEquals(Operation.UNSUPPORTED, of("GET", null, "attributes", false));
    assertEquals(Operation.UNSUPPORTED, of("PUT", "k", "attributes", false));
  }

  @Test
  void aBucketsPostIsAFormUploadUnlessItNamesASubresource() {
    assertEquals(Operation.POST_OBJECT, of("POST", null, "", false));
    assertEquals("PostObject", Operation.POST_OBJECT.s3Name());
    assertEquals("s3:PutObject", Operation.POST_OBJECT.policyAction());
    assertEquals(Operation.DELETE_OBJECTS, of("POST", null, "delete", false));
    assertEquals(Operation.UNSUPPORTED, of("POST", null, "uploads", false));
    assertEquals(Operation.UNSUPPORTED, of("POST", null, "acl", false));
    assertEquals(Operation.UNSUPPORTED, of("POST", null, "lifecycle", false));
    // A key's POST is never a form upload.
    assertEquals(Operation.UNSUPPORTED, of("POST", "k", "", false));
  }
}
