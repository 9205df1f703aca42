package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumValue;
import java.util.List;
import java.util.Map;

/**
 * Writes the XML documents S3 answers with, one method per document, each returning the whole body:
 * UTF-8 with the XML declaration, compact, in S3's namespace (except Error, which S3 sends without
 * one), with the elements real clients read, in S3's order. Times are UTC with milliseconds, ETags
 * carry their double quotes, and text is escaped as {@link XmlOut} describes. Safe to call from any
 * thread.
 */
public final class S3XmlWriter {
  private S3XmlWriter() {}

  /** {@code <Error>}: code, message, the extra fields, resource, request id, host id. */
  public static byte[] error(ErrorResponse e) {
    XmlOut x = new XmlOut("Error", false);
    x.element("Code", e.code()).element("Message", e.message());
    for (Map.Entry<String, String> d : e.details().entrySet()) {
      x.element(d.getKey(), d.getValue());
    }
    return x.optional("Resource", e.resource())
        .optional("RequestId", e.requestId())
        .optional("HostId", e.hostId())
        .finish();
  }

  /** {@code <ListAllMyBucketsResult>} of ListBuckets. */
  public static byte[] listAllMyBuckets(BucketListing listing) {
    XmlOut x = new XmlOut("ListAllMyBucketsResult", true);
    listing.owner().write(x, "Owner");
    x.open("Buckets");
    for (BucketListing.Bucket b : listing.buckets()) {
      x.open("Bucket")
          .element("Name", b.name())
          .element("CreationDate", b.creationDate())
          .optional("BucketRegion", b.region())
          .close();
    }
    return x.close().finish();
  }

  /** {@code <ListBucketResult>} of ListObjects (version 1). */
  public static byte[] listObjects(ObjectListingV1 l) {
    boolean url = l.urlEncoding();
    boolean hasDelimiter = l.delimiter() != null && !l.delimiter().isEmpty();
    XmlOut x = new XmlOut("ListBucketResult", true);
    x.element("Name", l.bucket())
        .element("Prefix", KeyEncoding.encodeIf(url, l.prefix()))
        .element("Marker", KeyEncoding.encodeIf(url, l.marker()));
    if (l.truncated() && hasDelimiter && l.nextMarker() != null) {
      x.element("NextMarker", KeyEncoding.encodeIf(url, l.nextMarker()));
    }
    x.element("MaxKeys", l.maxKeys());
    if (hasDelimiter) {
      x.element("Delimiter", KeyEncoding.encodeIf(url, l.delimiter()));
    }
    if (url) {
      x.element("EncodingType", "url");
    }
    x.element("IsTruncated", l.truncated());
    for (ObjectEntry o : l.contents()) {
      o.write(x, url, true);
    }
    writeCommonPrefixes(x, l.commonPrefixes(), url);
    return x.finish();
  }

  /** {@code <ListBucketResult>} of ListObjectsV2. */
  public static byte[] listObjectsV2(ObjectListingV2 l) {
    boolean url = l.urlEncoding();
    XmlOut x = new XmlOut("ListBucketResult", true);
    x.element("Name", l.bucket())
        .element("Prefix", KeyEncoding.encodeIf(url, l.prefix()))
        .optional("ContinuationToken", l.continuationToken())
        .optional("NextContinuationToken", l.nextContinuationToken())
        .element("KeyCount", l.keyCount())
        .element("MaxKeys", l.maxKeys());
    if (l.delimiter() != null && !l.delimiter().isEmpty()) {
      x.element("Delimiter", KeyEncoding.encodeIf(url, l.delimiter()));
    }
    if (url) {
      x.element("EncodingType", "url");
    }
    x.element("IsTruncated", l.truncated());
    if (l.startAfter() != null) {
      x.element("StartAfter", KeyEncoding.encodeIf(url, l.startAfter()));
    }
    for (ObjectEntry o : l.contents()) {
      o.write(x, url, l.fetchOwner());
    }
    writeCommonPrefixes(x, l.commonPrefixes(), url);
    return x.finish();
  }

  /** {@code <ListVersionsResult>} of ListObjectVersions. */
  public static byte[] listObjectVersions(ObjectVersionListing l) {
    boolean url = l.urlEncoding();
    XmlOut x = new XmlOut("ListVersionsResult", true);
    x.element("Name", l.bucket())
        .element("Prefix", KeyEncoding.encodeIf(url, l.prefix()))
        .element("KeyMarker", KeyEncoding.encodeIf(url, l.keyMarker()))
        .element("VersionIdMarker", l.versionIdMarker());
    if (l.truncated() && l.nextKeyMarker() != null) {
      x.element("NextKeyMarker", KeyEncoding.encodeIf(url, l.nextKeyMarker()))
          .optional("NextVersionIdMarker", l.nextVersionIdMarker());
    }
    x.element("MaxKeys", l.maxKeys());
    if (l.delimiter() != null && !l.delimiter().isEmpty()) {
      x.element("Delimiter", KeyEncoding.encodeIf(url, l.delimiter()));
    }
    if (url) {
      x.element("EncodingType", "url");
    }
    x.element("IsTruncated", l.truncated());
    for (VersionEntry v : l.versions()) {
      v.write(x, url);
    }
    writeCommonPrefixes(x, l.commonPrefixes(), url);
    return x.finish();
  }

  /** {@code <CopyObjectResult>} of CopyObject. */
  public static byte[] copyObjectResult(CopyResult r) {
    XmlOut x = new XmlOut("CopyObjectResult", true);
    x.element("ETag", XmlOut.quoted(r.etag())).element("LastModified", r.lastModified());
    writeChecksum(x, r.checksum(), true);
    return x.finish();
  }

  /**
   * {@code <PostResponse>} of a browser POST upload answered 201 ({@code success_action_status}):
   * the object's URL, bucket, key and quoted ETag. S3 writes it without a namespace.
   */
  public static byte[] postResponse(String location, String bucket, String key, String etag) {
    XmlOut x = new XmlOut("PostResponse", false);
    x.element("Location", location)
        .element("Bucket", bucket)
        .element("Key", key)
        .element("ETag", XmlOut.quoted(etag));
    return x.finish();
  }

  /** {@code <CopyPartResult>} of UploadPartCopy. */
  public static byte[] copyPartResult(CopyResult r) {
    XmlOut x = new XmlOut("CopyPartResult", true);
    x.element("ETag", XmlOut.quoted(r.etag())).element("LastModified", r.lastModified());
    writeChecksum(x, r.checksum(), false);
    return x.finish();
  }

  /** {@code <InitiateMultipartUploadResult>} of CreateMultipartUpload. */
  public static byte[] initiateMultipartUploadResult(InitiatedUpload u) {
    return new XmlOut("InitiateMultipartUploadResult", true)
        .element("Bucket", u.bucket())
        .element("Key", u.key())
        .element("UploadId", u.uploadId())
        .finish();
  }

  /** {@code <CompleteMultipartUploadResult>} of CompleteMultipartUpload. */
  public static byte[] completeMultipartUploadResult(CompletedUpload u) {
    XmlOut x =
        new XmlOut("CompleteMultipartUploadResult", true)
            .element("Location", u.location())
            .element("Bucket", u.bucket())
            .element("Key", u.key())
            .element("ETag", XmlOut.quoted(u.etag()));
    writeChecksum(x, u.checksum(), true);
    return x.finish();
  }

  /** {@code <ListPartsResult>} of ListParts. */
  public static byte[] listPartsResult(PartListing l) {
    XmlOut x =
        new XmlOut("ListPartsResult", true)
            .element("Bucket", l.bucket())
            .element("Key", l.key())
            .element("UploadId", l.uploadId())
            .element("PartNumberMarker", l.partNumberMarker());
    if (l.nextPartNumberMarker() != null) {
      x.element("NextPartNumberMarker", l.nextPartNumberMarker());
    }
    x.element("MaxParts", l.maxParts()).element("IsTruncated", l.truncated());
    for (PartListing.Part p : l.parts()) {
      x.open("Part")
          .element("PartNumber", p.partNumber())
          .element("LastModified", p.lastModified())
          .element("ETag", XmlOut.quoted(p.etag()))
          .element("Size", p.size());
      writeChecksum(x, p.checksum(), false);
      x.close();
    }
    l.initiator().write(x, "Initiator");
    l.owner().write(x, "Owner");
    x.element("StorageClass", l.storageClass());
    if (l.checksumAlgorithm() != null) {
      x.element("ChecksumAlgorithm", l.checksumAlgorithm().name());
    }
    if (l.checksumType() != null) {
      x.element("ChecksumType", l.checksumType().name());
    }
    return x.finish();
  }

  /** {@code <ListMultipartUploadsResult>} of ListMultipartUploads. */
  public static byte[] listMultipartUploadsResult(UploadListing l) {
    boolean url = l.urlEncoding();
    XmlOut x =
        new XmlOut("ListMultipartUploadsResult", true)
            .element("Bucket", l.bucket())
            .element("KeyMarker", KeyEncoding.encodeIf(url, l.keyMarker()))
            .element("UploadIdMarker", l.uploadIdMarker())
            .element("NextKeyMarker", KeyEncoding.encodeIf(url, l.nextKeyMarker()))
            .element("NextUploadIdMarker", l.nextUploadIdMarker());
    if (l.delimiter() != null && !l.delimiter().isEmpty()) {
      x.element("Delimiter", KeyEncoding.encodeIf(url, l.delimiter()));
    }
    x.element("Prefix", KeyEncoding.encodeIf(url, l.prefix()))
        .element("MaxUploads", l.maxUploads())
        .element("IsTruncated", l.truncated());
    for (UploadListing.Upload u : l.uploads()) {
      x.open("Upload")
          .element("Key", KeyEncoding.encodeIf(url, u.key()))
          .element("UploadId", u.uploadId());
      u.initiator().write(x, "Initiator");
      u.owner().write(x, "Owner");
      x.element("StorageClass", u.storageClass()).element("Initiated", u.initiated());
      if (u.checksumAlgorithm() != null) {
        x.element("ChecksumAlgorithm", u.checksumAlgorithm().name());
      }
      if (u.checksumType() != null) {
        x.element("ChecksumType", u.checksumType().name());
      }
      x.close();
    }
    writeCommonPrefixes(x, l.commonPrefixes(), url);
    if (url) {
      x.element("EncodingType", "url");
    }
    return x.finish();
  }

  /** {@code <DeleteResult>} of DeleteObjects; in quiet mode the errors only. */
  public static byte[] deleteResult(DeleteResult r) {
    XmlOut x = new XmlOut("DeleteResult", true);
    if (!r.quiet()) {
      for (DeleteResult.Deleted d : r.deleted()) {
        x.open("Deleted").element("Key", d.key()).optional("VersionId", d.versionId());
        if (d.deleteMarker()) {
          x.element("DeleteMarker", true)
              .optional("DeleteMarkerVersionId", d.deleteMarkerVersionId());
        }
        x.close();
      }
    }
    for (DeleteResult.Failure f : r.errors()) {
      x.open("Error")
          .element("Key", f.key())
          .optional("VersionId", f.versionId())
          .element("Code", f.code())
          .element("Message", f.message())
          .close();
    }
    return x.finish();
  }

  /** {@code <Tagging>} of GetObjectTagging. */
  public static byte[] tagging(TagSet tags) {
    return tagging(tags.tags());
  }

  /** {@code <Tagging>} of GetBucketTagging. */
  public static byte[] bucketTagging(BucketTags tags) {
    return tagging(tags.tags());
  }

  private static byte[] tagging(List<TagSet.Tag> tags) {
    XmlOut x = new XmlOut("Tagging", true).open("TagSet");
    for (TagSet.Tag t : tags) {
      x.open("Tag").element("Key", t.key()).element("Value", t.value()).close();
    }
    return x.close().finish();
  }

  /** {@code <CORSConfiguration>} of GetBucketCors, the rules' elements in S3's order. */
  public static byte[] corsConfiguration(CorsConfiguration c) {
    XmlOut x = new XmlOut("CORSConfiguration", true);
    for (CorsConfiguration.Rule rule : c.rules()) {
      x.open("CORSRule").optional("ID", rule.id());
      rule.allowedHeaders().forEach(h -> x.element("AllowedHeader", h));
      rule.allowedMethods().forEach(m -> x.element("AllowedMethod", m));
      rule.allowedOrigins().forEach(o -> x.element("AllowedOrigin", o));
      rule.exposeHeaders().forEach(h -> x.element("ExposeHeader", h));
      if (rule.maxAgeSeconds() != null) {
        x.element("MaxAgeSeconds", rule.maxAgeSeconds());
      }
      x.close();
    }
    return x.finish();
  }

  /**
   * {@code <LifecycleConfiguration>} of GetBucketLifecycleConfiguration, the rules' elements in
   * S3's order; a rule given with a bare prefix is answered so.
   */
  public static byte[] lifecycleConfiguration(LifecycleConfiguration c) {
    XmlOut x = new XmlOut("LifecycleConfiguration", true);
    for (LifecycleConfiguration.Rule rule : c.rules()) {
      x.open("Rule");
      if (rule.expirationDays() != null) {
        x.open("Expiration").element("Days", rule.expirationDays()).close();
      } else if (rule.expirationDate() != null) {
        x.open("Expiration").element("Date", rule.expirationDate()).close();
      } else if (rule.expiredObjectDeleteMarker()) {
        x.open("Expiration").element("ExpiredObjectDeleteMarker", true).close();
      }
      x.optional("ID", rule.id());
      LifecycleConfiguration.Filter f = rule.filter();
      if (f.legacyPrefix()) {
        x.element("Prefix", f.prefix());
      } else {
        x.open("Filter");
        int conditions =
            (f.prefix().isEmpty() ? 0 : 1)
                + f.tags().size()
                + (f.sizeGreaterThan() == null ? 0 : 1)
                + (f.sizeLessThan() == null ? 0 : 1);
        if (conditions > 1) {
          x.open("And");
        }
        if (!f.prefix().isEmpty() || conditions > 1) {
          x.element("Prefix", f.prefix());
        }
        for (TagSet.Tag t : f.tags()) {
          x.open("Tag").element("Key", t.key()).element("Value", t.value()).close();
        }
        if (f.sizeGreaterThan() != null) {
          x.element("ObjectSizeGreaterThan", f.sizeGreaterThan());
        }
        if (f.sizeLessThan() != null) {
          x.element("ObjectSizeLessThan", f.sizeLessThan());
        }
        if (conditions > 1) {
          x.close();
        }
        x.close();
      }
      x.element("Status", rule.enabled() ? "Enabled" : "Disabled");
      if (rule.noncurrentDays() != null) {
        x.open("NoncurrentVersionExpiration").element("NoncurrentDays", rule.noncurrentDays());
        if (rule.newerNoncurrentVersions() != null) {
          x.element("NewerNoncurrentVersions", rule.newerNoncurrentVersions());
        }
        x.close();
      }
      if (rule.abortDays() != null) {
        x.open("AbortIncompleteMultipartUpload")
            .element("DaysAfterInitiation", rule.abortDays())
            .close();
      }
      x.close();
    }
    return x.finish();
  }

  /**
   * {@code <GetObjectAttributesResponse>} of GetObjectAttributes: the ETag without quotes, as S3
   * writes it there; the part count as {@code PartsCount}, the element S3 sends for it.
   */
  public static byte[] objectAttributes(ObjectAttributesResult a) {
    XmlOut x = new XmlOut("GetObjectAttributesResponse", true);
    x.optional("ETag", a.etag());
    if (a.checksum() != null) {
      ChecksumValue c = a.checksum();
      x.open("Checksum")
          .element(c.algorithm().xmlElement(), c.valueWithoutPartCount())
          .element("ChecksumType", c.type().name())
          .close();
    }
    if (a.parts() != null) {
      ObjectAttributesResult.Parts p = a.parts();
      x.open("ObjectParts")
          .element("IsTruncated", p.truncated())
          .element("MaxParts", p.maxParts())
          .element("NextPartNumberMarker", p.nextPartNumberMarker())
          .element("PartNumberMarker", p.partNumberMarker());
      for (ObjectAttributesResult.Part part : p.parts()) {
        x.open("Part")
            .element("PartNumber", part.partNumber())
            .element("Size", part.size())
            .close();
      }
      x.element("PartsCount", p.totalPartsCount()).close();
    }
    x.optional("StorageClass", a.storageClass());
    if (a.objectSize() != null) {
      x.element("ObjectSize", a.objectSize());
    }
    return x.finish();
  }

  /**
   * {@code <LocationConstraint>} of GetBucketLocation: empty for us-east-1 (or no region), as S3
   * answers for buckets there, otherwise the region.
   */
  public static byte[] locationConstraint(String region) {
    if (region == null || region.isEmpty() || region.equals("us-east-1")) {
      return XmlOut.emptyRoot("LocationConstraint");
    }
    return new XmlOut("LocationConstraint", true).text(region).finish();
  }

  /**
   * {@code <AccessControlPolicy>} of GetBucketAcl and GetObjectAcl: the owner and the grants, a
   * grantee's {@code xsi:type} given by what names it.
   */
  public static byte[] accessControlPolicy(AccessControlPolicy acl) {
    XmlOut x = new XmlOut("AccessControlPolicy", true);
    acl.owner().write(x, "Owner");
    x.open("AccessControlList");
    for (AccessControlPolicy.Grant g : acl.grants()) {
      x.open("Grant");
      if (!g.id().isEmpty()) {
        x.openTyped("Grantee", "CanonicalUser")
            .element("ID", g.id())
            .optional(
                "DisplayName", g.id().equals(acl.owner().id()) ? acl.owner().displayName() : null)
            .close();
      } else {
        x.openTyped("Grantee", "Group").element("URI", g.uri()).close();
      }
      x.element("Permission", g.permission()).close();
    }
    x.close();
    return x.finish();
  }

  /**
   * {@code <VersioningConfiguration>} of GetBucketVersioning: empty, as S3 answers for a bucket
   * whose versioning was never enabled (Strata keeps one version of each object).
   */
  public static byte[] versioningNeverEnabled() {
    return XmlOut.emptyRoot("VersioningConfiguration");
  }

  /**
   * {@code <VersioningConfiguration>} of GetBucketVersioning for a bucket whose versioning was
   * enabled once: its status, {@code Enabled} or {@code Suspended}.
   */
  public static byte[] versioning(String status) {
    return new XmlOut("VersioningConfiguration", true).element("Status", status).finish();
  }

  private static void writeCommonPrefixes(XmlOut x, Iterable<String> prefixes, boolean url) {
    for (String p : prefixes) {
      x.open("CommonPrefixes").element("Prefix", KeyEncoding.encodeIf(url, p)).close();
    }
  }

  private static void writeChecksum(XmlOut x, ChecksumValue c, boolean withType) {
    if (c == null) {
      return;
    }
    x.element(c.algorithm().xmlElement(), c.value());
    if (withType) {
      x.element("ChecksumType", c.type().name());
    }
  }
}
