package io.strata.underfs.s3;

import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystem.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.NoSuchElementException;
import java.util.Queue;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The children of one emulated directory: a ListObjectsV2 with delimiter "/" whose pages are
 * fetched one at a time as the caller advances, so only one page (at most 1,000 keys) is ever held.
 * Common prefixes and zero-byte {@code name/} keys are directories; the directory's own marker is
 * skipped. The first page is fetched on construction so that the store can tell an empty directory
 * from a missing one. A failure fetching a later page surfaces from {@link #hasNext()} as an {@link
 * UncheckedIOException} wrapping the translated error.
 */
final class S3ListingIterator implements CloseableIterator<UfsStatus> {
  private final S3Client s3;
  private final S3Errors errors;
  private final S3Location dir;
  private final String prefix;
  private final int pageSize;
  private final Queue<UfsStatus> page = new ArrayDeque<>();
  private final boolean anyKey;
  private String continuation;
  private boolean lastPage;
  private int pagesFetched;
  private boolean closed;

  S3ListingIterator(S3Client s3, S3Errors errors, S3Location dir, int pageSize) throws IOException {
    this.s3 = s3;
    this.errors = errors;
    this.dir = dir;
    this.prefix = dir.dirPrefix();
    this.pageSize = pageSize;
    int seen = fetchPage();
    // S3 may return an empty page that is still truncated; keep going until keys arrive.
    while (page.isEmpty() && !lastPage) {
      seen += fetchPage();
    }
    this.anyKey = seen > 0;
  }

  /** Whether any key at all (the directory's own marker included) lies under the prefix. */
  boolean anyKeyUnderPrefix() {
    return anyKey;
  }

  /** Pages requested so far. */
  int pagesFetched() {
    return pagesFetched;
  }

  /** Fetches the next page into the queue; returns the number of keys and prefixes in it. */
  private int fetchPage() throws IOException {
    ListObjectsV2Request.Builder request =
        ListObjectsV2Request.builder()
            .bucket(dir.bucket())
            .prefix(prefix)
            .delimiter("/")
            .maxKeys(pageSize);
    if (continuation != null) {
      request.continuationToken(continuation);
    }
    ListObjectsV2Response response;
    try {
      response = s3.listObjectsV2(request.build());
    } catch (SdkException e) {
      throw errors.translate("listing", dir.uri(), e);
    }
    pagesFetched++;
    for (CommonPrefix p : response.commonPrefixes()) {
      String name = p.prefix().substring(prefix.length());
      name = name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
      if (!name.isEmpty()) {
        page.add(S3UnderFileSystem.directoryStatus(name, 0));
      }
    }
    for (S3Object o : response.contents()) {
      String name = o.key().substring(prefix.length());
      if (name.isEmpty() || name.contains(UnderFileSystem.TEMP_MARKER)) {
        continue; // the listed directory's own marker, or a persist in progress
      }
      if (name.endsWith("/")) {
        page.add(
            S3UnderFileSystem.directoryStatus(
                name.substring(0, name.length() - 1),
                o.lastModified() == null ? 0 : o.lastModified().toEpochMilli()));
      } else {
        page.add(S3UnderFileSystem.fileStatus(name, o.size(), o.lastModified(), o.eTag()));
      }
    }
    continuation = response.nextContinuationToken();
    lastPage = !Boolean.TRUE.equals(response.isTruncated()) || continuation == null;
    return response.contents().size() + response.commonPrefixes().size();
  }

  @Override
  public boolean hasNext() {
    try {
      while (page.isEmpty() && !lastPage && !closed) {
        fetchPage();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return !page.isEmpty() && !closed;
  }

  @Override
  public UfsStatus next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return page.remove();
  }

  @Override
  public void close() {
    // Nothing stays open between pages; dropping the buffered page is all there is to free.
    closed = true;
    page.clear();
  }
}
