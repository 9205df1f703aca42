package io.strata.proxy.xml;

import java.util.Objects;

/**
 * One entry of a ListObjectVersions page: a version of an object (a {@code <Version>} element) or a
 * delete marker (a {@code <DeleteMarker>}, of which only the key, version id, latest flag, time and
 * owner are written).
 *
 * @param object the key, time, ETag, size and owner of the version
 * @param versionId the version's id; {@code null} (the string) for the version written while
 *     versioning was never enabled or suspended
 * @param latest whether it is the key's current version
 * @param deleteMarker whether it is a delete marker rather than an object
 */
public record VersionEntry(
    ObjectEntry object, String versionId, boolean latest, boolean deleteMarker) {
  public VersionEntry {
    Objects.requireNonNull(object, "object");
    Objects.requireNonNull(versionId, "versionId");
  }

  void write(XmlOut x, boolean urlEncoding) {
    if (!deleteMarker) {
      object.writeVersion(x, urlEncoding, versionId, latest);
      return;
    }
    x.open("DeleteMarker")
        .element("Key", KeyEncoding.encodeIf(urlEncoding, object.key()))
        .element("VersionId", versionId)
        .element("IsLatest", latest)
        .element("LastModified", object.lastModified());
    if (object.owner() != null) {
      object.owner().write(x, "Owner");
    }
    x.close();
  }
}
