package io.strata.proxy.xml;

import java.util.Objects;

/**
 * The owner or initiator of a bucket, object or upload, as S3 writes it: {@code <ID>} always,
 * {@code <DisplayName>} only when there is one (S3 has stopped sending display names in most
 * regions, so clients treat it as optional).
 */
public record Owner(String id, String displayName) {
  public Owner {
    Objects.requireNonNull(id, "id");
  }

  void write(XmlOut x, String element) {
    x.open(element).element("ID", id).optional("DisplayName", displayName).close();
  }
}
