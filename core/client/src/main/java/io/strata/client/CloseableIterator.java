package io.strata.client;

import java.io.Closeable;
import java.util.Iterator;

/**
 * An iterator over a remote resource that must be closed, such as a directory listing streamed from
 * the master. Closing early releases the resource (the stream is cancelled). A failure after the
 * first element surfaces from {@link #hasNext()} or {@link #next()} as an {@link
 * java.io.UncheckedIOException} whose cause is a {@link io.strata.common.error.StrataException}.
 */
public interface CloseableIterator<T> extends Iterator<T>, Closeable {
  @Override
  void close();
}
