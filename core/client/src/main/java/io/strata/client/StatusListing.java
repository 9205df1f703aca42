package io.strata.client;

import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import io.strata.client.master.MasterClient;
import io.strata.client.master.StreamRetries;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The children of a directory, streamed from the master a page at a time. gRPC asks the server for
 * the next page only as the caller consumes entries, so a directory of any size costs about one
 * page of memory here. If the stream breaks (master unreachable, or the stream's deadline passes
 * while the caller is slow), the listing resumes after the last name returned, so no entry is lost
 * or repeated. The sync option goes with the first request only: a resumed listing continues the
 * state the first one synced. {@link #close()} cancels the stream. Not thread-safe.
 */
final class StatusListing implements CloseableIterator<FileInfo> {
  private final MasterClient master;
  private final String path;
  private final SyncOption sync;
  private final boolean withBlocks;
  private final boolean loadedOnly;
  private final boolean includeHidden;
  private Context.CancellableContext call;
  private Iterator<ListStatusResponse> pages;
  private boolean pageSeenOnThisCall;
  private List<FileInfo> page = List.of();
  private int index;
  private String lastName = "";
  // Started after a name the caller gave: the sync option still applies to the first call.
  private boolean resumed;
  private boolean finished;

  /**
   * @param withBlocks ask for each complete file's blocks and their holders too
   * @param loadedOnly fail (FAILED_PRECONDITION) rather than load a directory never listed
   */
  StatusListing(
      MasterClient master, String path, SyncOption sync, boolean withBlocks, boolean loadedOnly)
      throws StrataException {
    this(master, path, sync, withBlocks, loadedOnly, false, "");
  }

  /**
   * @param includeHidden list hidden entries too (the S3 proxy's staged uploads and noncurrent
   *     versions)
   * @param startAfter list the children whose names follow this one ("" for all)
   */
  StatusListing(
      MasterClient master,
      String path,
      SyncOption sync,
      boolean withBlocks,
      boolean loadedOnly,
      boolean includeHidden,
      String startAfter)
      throws StrataException {
    this.master = master;
    this.path = path;
    this.sync = sync;
    this.withBlocks = withBlocks;
    this.loadedOnly = loadedOnly;
    this.includeHidden = includeHidden;
    this.lastName = startAfter;
    this.resumed = !startAfter.isEmpty();
    fetch();
  }

  @Override
  public boolean hasNext() {
    if (index < page.size()) {
      return true;
    }
    if (finished) {
      return false;
    }
    try {
      fetch();
    } catch (StrataException e) {
      close();
      throw new UncheckedIOException(e);
    }
    return index < page.size();
  }

  @Override
  public FileInfo next() {
    if (!hasNext()) {
      throw new NoSuchElementException("no more entries in " + path);
    }
    FileInfo f = page.get(index++);
    lastName = f.getName();
    return f;
  }

  /** Moves to the next non-empty page, or marks the listing finished. */
  private void fetch() throws StrataException {
    StreamRetries retries = master.streamRetries();
    while (true) {
      try {
        if (pages == null) {
          open(retries);
        }
        while (pages.hasNext()) {
          pageSeenOnThisCall = true;
          List<FileInfo> files = pages.next().getFilesList();
          if (!files.isEmpty()) {
            page = files;
            index = 0;
            return;
          }
        }
        finished = true;
        page = List.of();
        index = 0;
        closeCall();
        return;
      } catch (StatusRuntimeException e) {
        closeCall();
        retries.afterFailure(e, pageSeenOnThisCall);
      }
    }
  }

  private void open(StreamRetries retries) {
    call = Context.current().withCancellation();
    ListStatusRequest.Builder request =
        ListStatusRequest.newBuilder()
            .setPath(path)
            .setStartAfter(lastName)
            .setIncludeBlocks(withBlocks)
            .setLoadedOnly(loadedOnly)
            .setIncludeHidden(includeHidden);
    if (resumed) {
      resumed = false;
      if (sync.given()) {
        request.setSyncIntervalMs(sync.intervalMs());
      }
    } else if (!lastName.isEmpty()) {
      request.setSyncIntervalMs(SyncOption.NEVER.intervalMs());
    } else if (sync.given()) {
      request.setSyncIntervalMs(sync.intervalMs());
    }
    Context previous = call.attach();
    try {
      pages = retries.open(stub -> stub.listStatus(request.build()));
    } finally {
      call.detach(previous);
    }
    pageSeenOnThisCall = false;
  }

  private void closeCall() {
    if (call != null) {
      call.cancel(null);
      call = null;
    }
    pages = null;
  }

  @Override
  public void close() {
    finished = true;
    page = List.of();
    closeCall();
  }
}
