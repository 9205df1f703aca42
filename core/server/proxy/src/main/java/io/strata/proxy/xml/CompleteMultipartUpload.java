package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumAlgorithm;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A parsed {@code <CompleteMultipartUpload>} document: at least one part, in strictly ascending
 * part-number order, each part number between 1 and 10000.
 */
public record CompleteMultipartUpload(List<Part> parts) {
  /** The highest part number S3 allows. */
  public static final int MAX_PART_NUMBER = 10_000;

  public CompleteMultipartUpload {
    parts = List.copyOf(parts);
  }

  /**
   * A part the client says it uploaded: its number, its ETag without quotes (clients send it with
   * or without) and any checksums it sent, base64 as sent, not yet checked against the stored part.
   */
  public record Part(int partNumber, String etag, Map<ChecksumAlgorithm, String> checksums) {
    public Part {
      Objects.requireNonNull(etag, "etag");
      checksums = Map.copyOf(checksums);
    }
  }
}
