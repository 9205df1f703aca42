package io.strata.fuse;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reader of one open file, shared by all of its handles: positioned reads served from the
 * mount's {@link PageCache} where it holds the bytes, fetched from the file's {@link
 * PositionedSource} where it does not, with read-ahead for handles reading sequentially.
 *
 * <p>Guarantees:
 *
 * <ul>
 *   <li>No lock serialises readers of the file: a read takes no lock of this reader; pages are
 *       claimed per page in a concurrent map, so concurrent misses of one page fetch it once (the
 *       others wait for that fetch, not for each other).
 *   <li>A random read (see {@link ReadPattern}) fetches exactly the bytes it asks that the cache
 *       does not hold, never whole pages around them; it stores what it fetched only as whole pages
 *       that it covers entirely. 4 KiB random reads cost 4 KiB from the source.
 *   <li>A sequential read fetches the whole pages it touches, and asks the mount's {@link
 *       ReadAheadPool} to fetch the handle's read-ahead window in the background; when the pool's
 *       queue is full the read-ahead is skipped, never waited for.
 *   <li>Nothing past {@link #length()} is ever asked of the source.
 *   <li>A failed read-ahead is dropped (logged at debug); a read that wanted its pages fetches them
 *       itself, and a foreground fetch's error reaches its caller.
 *   <li>With the cache off every read goes straight to the source, exactly as asked; so does a read
 *       that the source serves from a local worker's mapped block file ({@link
 *       PositionedSource#readsLocally}): that is memory already, and a page copy of it would only
 *       cost a copy and garbage. Such reads neither fill the cache nor read ahead.
 * </ul>
 *
 * Pages fetched by a read still running when {@link PageCache#invalidate} is called for the file
 * may be stored after it; a file whose content changes gets a new file id, so they are never served
 * as its new content.
 */
public final class CachedFileReader implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(CachedFileReader.class);

  /**
   * Most bytes one fetch claims, page after page: large enough to amortise a claim, small enough
   * that several read-ahead threads share a window.
   */
  static final int MAX_FETCH_BYTES = 1 << 20;

  /** Attempts of a read to claim a page that others keep claiming before it fetches alone. */
  private static final int CLAIM_ATTEMPTS = 3;

  private final long fileId;
  private final PositionedSource source;
  private final PageCache cache;
  private final ReadAheadPool readAhead;
  private final long length;
  private final int pageSize;
  private final int pagesPerFetch;
  // Pages being fetched now, by index; the future completes with the page or the fetch's error.
  private final ConcurrentMap<Long, CompletableFuture<byte[]>> inFlight = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * @param fileId the file's id: the page cache's key, so that a file opened again finds its pages
   * @param source where the file's bytes come from; closed by {@link #close()}
   * @param cache the mount's page cache
   * @param readAhead the mount's read-ahead threads
   */
  public CachedFileReader(
      long fileId, PositionedSource source, PageCache cache, ReadAheadPool readAhead) {
    this.fileId = fileId;
    this.source = source;
    this.cache = cache;
    this.readAhead = readAhead;
    this.length = source.length();
    this.pageSize = cache.pageSize();
    this.pagesPerFetch = Math.max(1, MAX_FETCH_BYTES / pageSize);
  }

  /** The file's id. */
  public long fileId() {
    return fileId;
  }

  /** Length of the file in bytes. */
  public long length() {
    return length;
  }

  /**
   * Reads up to {@code size} bytes at {@code offset} into {@code dst} from {@code dstOff}, for the
   * handle whose access pattern is {@code handle}. Returns the number read, fewer than {@code size}
   * only at the end of the file, or -1 when {@code offset} is at or past the end. Safe to call
   * concurrently, from any handle.
   */
  public int read(long offset, byte[] dst, int dstOff, int size, ReadPattern handle)
      throws IOException {
    Objects.checkFromIndexSize(dstOff, size, dst.length);
    if (offset < 0) {
      throw StrataException.invalidArgument(
          "Negative read offset " + offset + " in file " + fileId);
    }
    if (size == 0) {
      return 0;
    }
    if (offset >= length) {
      return -1;
    }
    int n = (int) Math.min(size, length - offset);
    if (!cache.enabled()) {
      fetch(offset, dst, dstOff, n);
    } else if (source.readsLocally(offset) && source.readsLocally(offset + n - 1)) {
      // A worker's block file on this machine, mapped already: copying it straight into the
      // answer beats copying it into a page first, and keeps the cache for what is remote.
      fetch(offset, dst, dstOff, n);
      cache.recordLocal(n);
    } else {
      ReadPattern.Plan plan = handle.onRead(offset, n, length);
      // Queued first, so that the window's fetches overlap this read's own.
      if (plan.readsAhead() && readAhead.enabled()) {
        scheduleReadAhead(plan.aheadFrom(), plan.aheadTo(), handle);
      }
      if (plan.sequential()) {
        readPages(offset, dst, dstOff, n);
      } else {
        readExact(offset, dst, dstOff, n);
      }
    }
    cache.recordReturned(n);
    return n;
  }

  /**
   * Reads {@code dst.remaining()} bytes at {@code offset} straight into {@code dst} when the source
   * serves the whole range from memory on this machine (a local worker's block file) and the cache
   * is on: one copy, no page. Returns the number read, or -1 with nothing read when the range is
   * not local or ends past the file (the caller then uses {@link #read}).
   */
  public int readLocally(long offset, ByteBuffer dst) throws IOException {
    int n = dst.remaining();
    if (n == 0
        || offset < 0
        || offset + n > length
        || !cache.enabled()
        || !source.readsLocally(offset)
        || !source.readsLocally(offset + n - 1)) {
      return -1;
    }
    int got = source.readLocally(offset, dst);
    if (got > 0) {
      cache.recordSource(got);
      cache.recordLocal(got);
      cache.recordReturned(got);
    }
    return got;
  }

  /** What the reader fetches from (for a rename to redirect it). */
  PositionedSource source() {
    return source;
  }

  /** Closes the source; queued read-aheads of this file are dropped. Pages stay cached. */
  @Override
  public void close() throws IOException {
    closed = true;
    source.close();
  }

  // ---- random reads: exactly the missing bytes

  private void readExact(long offset, byte[] dst, int dstOff, int n) throws IOException {
    long end = offset + n;
    long pos = offset;
    long missStart = -1;
    while (pos < end) {
      long index = cache.pageOf(pos);
      long pageStart = index * pageSize;
      long stop = Math.min(end, pageStart + pageSize);
      byte[] page = cache.lookup(fileId, index);
      if (page != null && page.length >= stop - pageStart) {
        if (missStart >= 0) {
          fetchAndKeep(missStart, pos, dst, dstOff + (int) (missStart - offset));
          missStart = -1;
        }
        System.arraycopy(
            page, (int) (pos - pageStart), dst, dstOff + (int) (pos - offset), (int) (stop - pos));
      } else if (missStart < 0) {
        missStart = pos;
      }
      pos = stop;
    }
    if (missStart >= 0) {
      fetchAndKeep(missStart, end, dst, dstOff + (int) (missStart - offset));
    }
  }

  /** Fetches {@code [from, to)} into {@code dst} and keeps the whole pages it covers. */
  private void fetchAndKeep(long from, long to, byte[] dst, int dstOff) throws IOException {
    fetch(from, dst, dstOff, (int) (to - from));
    for (long index = cache.pageOf(from + pageSize - 1); index * pageSize < to; index++) {
      long pageStart = index * pageSize;
      long pageEnd = Math.min(pageStart + pageSize, length);
      if (pageEnd > to) {
        break;
      }
      int at = dstOff + (int) (pageStart - from);
      cache.put(fileId, index, Arrays.copyOfRange(dst, at, at + (int) (pageEnd - pageStart)));
    }
  }

  // ---- sequential reads: whole pages

  private void readPages(long offset, byte[] dst, int dstOff, int n) throws IOException {
    long end = offset + n;
    long lastPage = cache.pageOf(end - 1);
    long pos = offset;
    while (pos < end) {
      long index = cache.pageOf(pos);
      long pageStart = index * pageSize;
      long stop = Math.min(end, pageStart + pageSize);
      byte[] page = cache.lookup(fileId, index);
      if (page == null) {
        page = obtain(index, lastPage + 1);
      }
      System.arraycopy(
          page, (int) (pos - pageStart), dst, dstOff + (int) (pos - offset), (int) (stop - pos));
      pos = stop;
    }
  }

  /**
   * The page {@code index}, which the cache did not hold: joins a fetch of it in progress, or
   * fetches it with the missing pages after it up to {@code limit}.
   */
  private byte[] obtain(long index, long limit) throws IOException {
    for (int attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      CompletableFuture<byte[]> pending = inFlight.get(index);
      if (pending != null) {
        byte[] page = await(pending, index);
        // A failed fetch (a read-ahead's error) is not this read's: it fetches the page itself.
        return page != null ? page : fetchPage(index);
      }
      byte[][] fetched = fetchRun(index, limit);
      if (fetched.length > 0) {
        return fetched[0];
      }
      byte[] page = cache.peek(fileId, index);
      if (page != null) {
        return page;
      }
    }
    return fetchPage(index);
  }

  private byte[] await(CompletableFuture<byte[]> pending, long index) throws IOException {
    try {
      return pending.get();
    } catch (ExecutionException | CompletionException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StrataException(
          ErrorCode.UNAVAILABLE,
          "Interrupted while waiting for page " + index + " of file " + fileId + "; read again");
    }
  }

  /** Fetches one whole page (cut at the end of the file) without sharing, and keeps it. */
  private byte[] fetchPage(long index) throws IOException {
    long pageStart = index * pageSize;
    byte[] page = new byte[(int) (Math.min(pageStart + pageSize, length) - pageStart)];
    fetch(pageStart, page, 0, page.length);
    cache.put(fileId, index, page);
    return page;
  }

  /**
   * Claims the pages from {@code first} on that are neither held nor being fetched, stopping at the
   * first that is, at {@code limit} or after {@link #MAX_FETCH_BYTES}; fetches and keeps them one
   * page at a time, each released to its waiters as soon as it is kept. Returns the pages fetched,
   * none when {@code first} could not be claimed. Anyone who wants a claimed page waits on its
   * future; every claim is released, whatever happens.
   */
  private byte[][] fetchRun(long first, long limit) throws IOException {
    long lastIndex = cache.pageOf(length - 1);
    long end = Math.min(Math.min(limit, lastIndex + 1), first + pagesPerFetch);
    List<CompletableFuture<byte[]>> claims = new ArrayList<>((int) Math.max(0, end - first));
    for (long index = first; index < end; index++) {
      if (cache.peek(fileId, index) != null) {
        break;
      }
      CompletableFuture<byte[]> mine = new CompletableFuture<>();
      if (inFlight.putIfAbsent(index, mine) != null) {
        break;
      }
      // A fetch that finished between the peek and the claim has stored the page already.
      byte[] held = cache.peek(fileId, index);
      if (held != null) {
        inFlight.remove(index, mine);
        mine.complete(held);
        break;
      }
      claims.add(mine);
    }
    int claimed = claims.size();
    if (claimed == 0) {
      return new byte[0][];
    }
    byte[][] pages = new byte[claimed][];
    int done = 0;
    Throwable failure = null;
    try {
      // Each page is fetched into its own array and handed to its waiters at once: a
      // page-sized read costs the source (a mapped block or a worker request) little more than
      // a larger one, while one buffer for the run would be a second copy of every byte and,
      // at 1 MiB, an allocation G1 treats as humongous.
      for (; done < claimed; done++) {
        long index = first + done;
        long pageStart = index * pageSize;
        byte[] page = new byte[(int) (Math.min(pageStart + pageSize, length) - pageStart)];
        fetch(pageStart, page, 0, page.length);
        cache.put(fileId, index, page);
        pages[done] = page;
        CompletableFuture<byte[]> claim = claims.get(done);
        inFlight.remove(index, claim);
        claim.complete(page);
      }
      return pages;
    } catch (IOException | RuntimeException | Error e) {
      failure = e;
      throw e;
    } finally {
      for (int i = done; i < claimed; i++) {
        CompletableFuture<byte[]> claim = claims.get(i);
        inFlight.remove(first + i, claim);
        claim.completeExceptionally(
            failure != null
                ? failure
                : new IllegalStateException("fetch of page " + (first + i) + " abandoned"));
      }
    }
  }

  // ---- read-ahead

  private void scheduleReadAhead(long from, long to, ReadPattern handle) {
    long index = cache.pageOf(from);
    long end = cache.pageOf(to - 1) + 1;
    while (index < end) {
      long first = index;
      long limit = Math.min(end, index + pagesPerFetch);
      if (!readAhead.trySubmit(() -> readAhead(first, limit))) {
        cache.recordReadAheadSkipped();
        handle.readAheadSkipped(first * pageSize);
        return;
      }
      index = limit;
    }
  }

  /** Fetches the pages of {@code [first, limit)} that are neither held nor being fetched. */
  private void readAhead(long first, long limit) {
    long index = first;
    try {
      while (index < limit && !closed) {
        if (cache.peek(fileId, index) != null || inFlight.containsKey(index)) {
          index++;
          continue;
        }
        byte[][] pages = fetchRun(index, limit);
        long bytes = 0;
        for (byte[] page : pages) {
          bytes += page.length;
        }
        cache.recordReadAhead(bytes);
        index += Math.max(1, pages.length);
      }
    } catch (Exception e) {
      LOG.debug(
          "Read-ahead of file {} at page {} failed; reads will fetch it: {}",
          fileId,
          index,
          e.toString());
    }
  }

  // ---- the source

  /** Reads exactly {@code [position, position + len)} from the source. */
  private void fetch(long position, byte[] b, int off, int len) throws IOException {
    int done = 0;
    while (done < len) {
      int r = source.read(position + done, b, off + done, len - done);
      if (r <= 0) {
        throw new StrataException(
            ErrorCode.FAILED_PRECONDITION,
            "File "
                + fileId
                + " ended at "
                + (position + done)
                + " bytes, before its length "
                + length
                + "; it changed while open: open it again");
      }
      done += r;
    }
    cache.recordSource(len);
  }
}
