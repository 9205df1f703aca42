package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumType;
import java.time.Instant;
import java.util.Objects;

/**
 * One object of a listing, a {@code <Contents>} element. The ETag is written quoted whether or not
 * it is given with quotes. The owner is written when not null (in ListObjectsV2 only when the
 * request had {@code fetch-owner=true}); the checksum algorithm and type, when not null, tell a
 * client which checksum it can ask for on GET.
 */
public record ObjectEntry(
    String key,
    Instant lastModified,
    String etag,
    long size,
    String storageClass,
    Owner owner,
    ChecksumAlgorithm checksumAlgorithm,
    ChecksumType checksumType) {
  public ObjectEntry {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(lastModified, "lastModified");
    Objects.requireNonNull(etag, "etag");
    Objects.requireNonNull(storageClass, "storageClass");
    if (size < 0) {
      throw new IllegalArgumentException("negative size " + size);
    }
  }

  /** An entry of storage class STANDARD without owner or checksum. */
  public static ObjectEntry of(String key, Instant lastModified, String etag, long size) {
    return new ObjectEntry(key, lastModified, etag, size, "STANDARD", null, null, null);
  }

  void write(XmlOut x, boolean urlEncoding, boolean withOwner) {
    x.open("Contents")
        .element("Key", KeyEncoding.encodeIf(urlEncoding, key))
        .element("LastModified", lastModified)
        .element("ETag", XmlOut.quoted(etag));
    writeRest(x, withOwner);
  }

  /** The entry as one version of a ListObjectVersions page, a {@code <Version>} element. */
  void writeVersion(XmlOut x, boolean urlEncoding, String versionId, boolean latest) {
    x.open("Version")
        .element("Key", KeyEncoding.encodeIf(urlEncoding, key))
        .element("VersionId", versionId)
        .element("IsLatest", latest)
        .element("LastModified", lastModified)
        .element("ETag", XmlOut.quoted(etag));
    writeRest(x, true);
  }

  private void writeRest(XmlOut x, boolean withOwner) {
    if (checksumAlgorithm != null) {
      x.element("ChecksumAlgorithm", checksumAlgorithm.name());
    }
    if (checksumType != null) {
      x.element("ChecksumType", checksumType.name());
    }
    x.element("Size", size);
    if (withOwner && owner != null) {
      owner.write(x, "Owner");
    }
    x.element("StorageClass", storageClass).close();
  }
}
