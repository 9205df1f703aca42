package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.LoadMetadataProgress;
import io.strata.proto.journal.InodeEntry;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One LoadMetadata call: walks the tree below a path depth first and loads or syncs each
 * directory's children as a ListStatus would. The walk keeps a stack of cursors, one per level (a
 * directory and one page of its children), so its memory grows with the depth of the tree, never
 * with its size. A directory that cannot be loaded is counted, named in the progress (the first
 * {@value #FAILED_SHOWN}) and skipped; the walk goes on. Progress goes to the sink about once a
 * second and once at the end, with {@code done} set.
 */
final class MetadataLoad {
  private static final Logger LOG = LoggerFactory.getLogger(MetadataLoad.class);
  static final int FAILED_SHOWN = 100;
  private static final int PAGE = 256;
  private static final long PROGRESS_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** A directory being walked and the next page of its children. */
  private static final class Cursor {
    final long dirId;
    final String path;
    List<InodeEntry> page = List.of();
    int index;
    String after = "";
    boolean exhausted;

    Cursor(long dirId, String path) {
      this.dirId = dirId;
      this.path = path;
    }
  }

  private final InodeTree tree;
  private final ListingSync listings;
  private final Namespace namespace;
  private final String root;
  private final SyncInterval call;
  private final BooleanSupplier cancelled;
  private final Consumer<LoadMetadataProgress> sink;
  private final long startNanos = System.nanoTime();
  private long lastSentNanos = startNanos;
  private long files;
  private long directories;
  private long bytes;
  private long failedCount;
  private final List<String> failed = new ArrayList<>();

  /**
   * @param call the sync interval of every directory (null: each path's mount's or default)
   * @param cancelled polled between entries; the walk stops quietly when it turns true
   */
  MetadataLoad(
      InodeTree tree,
      ListingSync listings,
      Namespace namespace,
      String root,
      SyncInterval call,
      BooleanSupplier cancelled,
      Consumer<LoadMetadataProgress> sink) {
    this.tree = tree;
    this.listings = listings;
    this.namespace = namespace;
    this.root = root;
    this.call = call;
    this.cancelled = cancelled;
    this.sink = sink;
  }

  /**
   * Runs the walk and returns the final progress (also given to the sink).
   *
   * @throws IOException when the root itself cannot be loaded (the path is missing, or its store
   *     fails); failures below it are reported in the progress instead
   */
  LoadMetadataProgress run() throws IOException {
    listings.refresh(root, call);
    InodeEntry top = namespace.resolveBlocking(root, SyncInterval.NEVER);
    if (top.getDirectory()) {
      directories++;
      walk(top);
    } else {
      InodeEntry checked = namespace.resolveBlocking(root, call);
      files++;
      bytes += checked.getLength();
    }
    LoadMetadataProgress last = progress(true);
    sink.accept(last);
    LOG.info(
        "Loaded the metadata of {}: {} files, {} directories, {} failures, in {} ms",
        root,
        files,
        directories,
        failedCount,
        last.getElapsedMs());
    return last;
  }

  private void walk(InodeEntry top) {
    Deque<Cursor> stack = new ArrayDeque<>();
    stack.push(new Cursor(top.getId(), root));
    while (!stack.isEmpty() && !cancelled.getAsBoolean()) {
      Cursor c = stack.peek();
      InodeEntry child = next(c);
      if (child == null) {
        stack.pop();
        continue;
      }
      if (!child.getDirectory()) {
        files++;
        bytes += child.getLength();
      } else {
        String path = PathNames.join(c.path, child.getName());
        InodeEntry dir = load(path);
        if (dir != null && dir.getDirectory()) {
          directories++;
          stack.push(new Cursor(dir.getId(), path));
        } else if (dir != null) {
          files++;
          bytes += dir.getLength();
        }
      }
      if (System.nanoTime() - lastSentNanos >= PROGRESS_NANOS) {
        sink.accept(progress(false));
        lastSentNanos = System.nanoTime();
      }
    }
  }

  /** The next child of a cursor's directory, reading a new page when one is used up. */
  private InodeEntry next(Cursor c) {
    if (c.index >= c.page.size()) {
      if (c.exhausted) {
        return null;
      }
      c.page = tree.childrenPage(c.dirId, c.after, PAGE);
      c.index = 0;
      c.exhausted = c.page.size() < PAGE;
      if (c.page.isEmpty()) {
        return null;
      }
    }
    InodeEntry n = c.page.get(c.index++);
    c.after = n.getName();
    return n;
  }

  /** Loads or syncs a directory's children; returns what is at the path then, or null. */
  private InodeEntry load(String path) {
    try {
      listings.refresh(path, call);
      return listings.resolve(path, SyncInterval.NEVER);
    } catch (IOException | RuntimeException e) {
      if (gone(path)) {
        // Removed meanwhile (through Strata, or by the sync itself): nothing to load.
        return null;
      }
      failedCount++;
      if (failed.size() < FAILED_SHOWN) {
        failed.add(path);
      }
      LOG.warn("Cannot load the metadata of {}: {}", path, e.getMessage());
      return null;
    }
  }

  private boolean gone(String path) {
    try {
      listings.resolve(path, SyncInterval.NEVER);
      return false;
    } catch (StrataException e) {
      return e.code() == ErrorCode.NOT_FOUND;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  private LoadMetadataProgress progress(boolean done) {
    return LoadMetadataProgress.newBuilder()
        .setFiles(files)
        .setDirectories(directories)
        .setBytes(bytes)
        .setElapsedMs((System.nanoTime() - startNanos) / 1_000_000)
        .setDone(done)
        .addAllFailedPaths(failed)
        .setFailedCount(failedCount)
        .build();
  }
}
