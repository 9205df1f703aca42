package io.strata.fuse;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.common.DaemonThreads;
import io.strata.common.PathNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the kernel caches of the mount (names for {@code entry_timeout}, attributes and pages for
 * {@code attr_timeout}), and the means to drop it when a path changes elsewhere, so that a change
 * made through another client is seen through this mount at once rather than after the kernel's
 * timeouts.
 *
 * <p>libfuse 2's high-level API names files by path and keeps the kernel's node ids to itself,
 * while the kernel drops a name only by (parent node id, name) and a node's attributes and pages
 * only by node id. So the node ids are learnt from the requests themselves: an upcall thread reads
 * the request header before libfuse dispatches it ({@link UpcallThreads}), and the path handler
 * records which node the header names -- the parent for a lookup or a create, the node itself for
 * getattr, open and readdir, and the file linked for a link -- and the node of a name itself is
 * read from the entry libfuse answers a lookup, create, mkdir, mknod, symlink or link with ({@link
 * UpcallThreads} answers those on a channel of its own). Entries the mount never learnt (too many
 * to remember, or served by libfuse's own loop) expire by the kernel's timeouts as before.
 *
 * <p>While no change notice can arrive (the change stream is down), {@link #holdTo} makes the
 * kernel's answers expire as the mount's own do: every path the kernel was told of is dropped again
 * each TTL, so raising the kernel's timeouts costs no staleness then either.
 *
 * <p>Invalidations run on a thread of their own, in order, so that the caller (the change stream)
 * never waits for the kernel, which may hold a folder's lock while an upcall in it is answered. A
 * backlog past the queue's bound is replaced by dropping everything known. Once the mount goes away
 * ({@link #detach}), nothing more is sent.
 */
final class KernelEntries implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KernelEntries.class);
  private static final long ROOT_NODE = 1;
  // FUSE opcodes whose header names the parent folder of the path handled.
  private static final int LOOKUP = 1;
  private static final int SYMLINK = 6;
  private static final int MKNOD = 8;
  private static final int MKDIR = 9;
  private static final int LINK = 13;
  private static final int CREATE = 35;
  // FUSE opcodes whose header names the node of the path handled.
  private static final int GETATTR = 3;
  private static final int SETATTR = 4;
  private static final int OPEN = 14;
  private static final int OPENDIR = 27;
  private static final int READDIR = 28;

  /** What sends invalidations to the kernel: libfuse's notify calls on the mount's channel. */
  interface Notifier {
    /** Drops the kernel's name {@code name} in the folder {@code parent}. */
    void invalidateEntry(long parent, String name);

    /** Drops the kernel's attributes and cached pages of a node. */
    void invalidateNode(long node);
  }

  /** A path to drop, and whether everything below it goes too; a null path drops everything. */
  private record Pending(String path, boolean subtree, boolean nodeOnly) {
    Pending(String path, boolean subtree) {
      this(path, subtree, false);
    }
  }

  private final Cache<String, Long> nodes;

  /** Paths the kernel was told of since the last tick, while answers are held to a TTL. */
  private final Set<String> sinceTick = ConcurrentHashMap.newKeySet();

  private volatile long tickNanos;
  private final BlockingQueue<Pending> queue;
  private final AtomicBoolean overflow = new AtomicBoolean();
  private final LongAdder sent = new LongAdder();
  private final Thread sender;
  private volatile Notifier notifier;

  /**
   * @param maxPaths most paths whose node id is remembered
   */
  KernelEntries(long maxPaths, int queueSize) {
    this.nodes =
        Caffeine.newBuilder().maximumSize(Math.max(1, maxPaths)).executor(Runnable::run).build();
    this.queue = new ArrayBlockingQueue<>(Math.max(1, queueSize));
    this.sender = DaemonThreads.daemon(this::sendLoop, "strata-fuse-kernel-invalidation");
    sender.start();
  }

  /** Starts sending invalidations through {@code to} (the mount is up). */
  void attach(Notifier to) {
    this.notifier = to;
  }

  /** Stops sending: the mount's channel is about to be released. Waits for one in progress. */
  void detach() {
    synchronized (this) {
      notifier = null;
    }
  }

  /**
   * Records the node the kernel named in the request being handled for {@code path} (a path of the
   * mount, "/" its root); {@code opcode} and {@code node} are that request's header.
   */
  void seen(String path, int opcode, long node) {
    String named;
    switch (opcode) {
      case LOOKUP, SYMLINK, MKNOD, MKDIR, LINK, CREATE -> named = PathNames.parent(path);
      case GETATTR, SETATTR, OPEN, OPENDIR, READDIR -> named = path;
      default -> {
        return;
      }
    }
    if (tickNanos > 0) {
      sinceTick.add(path);
    }
    if (named != null) {
      seenNode(named, node);
    }
  }

  /** Records that the kernel holds {@code path} (a path of the mount) as node {@code node}. */
  void seenNode(String path, long node) {
    Long known = nodes.getIfPresent(path);
    if (known == null || known != node) {
      nodes.put(path, node);
    }
  }

  /**
   * While {@code ttl} is positive, drops every path the kernel was told of at least every {@code
   * ttl}, so that the kernel holds no answer longer than the mount's own cache does when no change
   * notice can reach it (the change stream is down); zero stops that.
   */
  void holdTo(Duration ttl) {
    tickNanos = ttl.toNanos();
    if (tickNanos == 0) {
      sinceTick.clear();
    }
  }

  /** Queues dropping what the kernel caches of {@code path} (a path of the mount). */
  void invalidate(String path, boolean subtree) {
    if (notifier != null && !queue.offer(new Pending(path, subtree))) {
      overflow.set(true);
    }
  }

  /** Whether the mount knows the kernel's node of {@code path} (a path of the mount). */
  boolean knowsNode(String path) {
    return path.equals(PathNames.ROOT) || nodes.getIfPresent(path) != null;
  }

  /**
   * Drops the kernel's attributes and pages of the node of {@code path} now, on the calling thread:
   * another name of a file this mount just changed (a hard link), which the kernel holds as a node
   * of its own. Only a node, never a name: dropping a name takes its folder's lock, which the
   * request being answered may hold; a node's attributes take no such lock. Leaving the name in
   * place also keeps the node, so the node learnt for the path stays the kernel's; a name dropped
   * and looked up again gets a new node, which the mount learns from the lookup's answer.
   *
   * @return whether the mount knew the node, so that the kernel was told
   */
  boolean invalidateNodeNow(String path) {
    Notifier to = notifier;
    Long node = path.equals(PathNames.ROOT) ? Long.valueOf(ROOT_NODE) : nodes.getIfPresent(path);
    if (to != null && node != null) {
      to.invalidateNode(node);
      sent.increment();
      return true;
    }
    return false;
  }

  /**
   * Drops the kernel's name {@code path} in its folder now, on the calling thread, so that the next
   * access of that name asks the mount. This takes the folder's lock in the kernel: never call it
   * for a folder the request being answered holds (see {@link #invalidateNodeNow}).
   */
  void invalidateEntryNow(String path) {
    Notifier to = notifier;
    String parent = PathNames.parent(path);
    Long parentNode =
        parent == null
            ? null
            : parent.equals(PathNames.ROOT) ? Long.valueOf(ROOT_NODE) : nodes.getIfPresent(parent);
    if (to != null && parentNode != null) {
      to.invalidateEntry(parentNode, PathNames.name(path));
      sent.increment();
    }
  }

  /**
   * Queues dropping the attributes and pages of the node of {@code path} (a path of the mount),
   * leaving its name and node in place (see {@link #invalidateNodeNow}).
   *
   * @return whether the mount knows the node; when it does not, nothing is queued
   */
  boolean invalidateNode(String path) {
    if (notifier == null || (!path.equals(PathNames.ROOT) && nodes.getIfPresent(path) == null)) {
      return false;
    }
    if (!queue.offer(new Pending(path, false, true))) {
      overflow.set(true);
    }
    return true;
  }

  /** Queues dropping everything the kernel caches that this mount knows of. */
  void invalidateAll() {
    if (notifier != null && !queue.offer(new Pending(null, true))) {
      overflow.set(true);
    }
  }

  /** Invalidations sent to the kernel. */
  long sent() {
    return sent.sum();
  }

  private void sendLoop() {
    long lastTick = System.nanoTime();
    while (true) {
      Pending p;
      try {
        long tick = tickNanos;
        p =
            queue.poll(
                tick > 0 ? Math.max(1, tick / 4) : TimeUnit.SECONDS.toNanos(1),
                TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        return;
      }
      long tick = tickNanos;
      if (tick > 0 && System.nanoTime() - lastTick >= tick) {
        lastTick = System.nanoTime();
        List<String> told = new ArrayList<>(sinceTick);
        sinceTick.removeAll(told);
        for (String path : told) {
          send(path);
        }
      }
      if (overflow.getAndSet(false)) {
        queue.clear();
        p = new Pending(null, true);
      }
      if (p == null) {
        continue;
      }
      try {
        if (p.path() == null) {
          sendAll();
        } else if (p.nodeOnly()) {
          invalidateNodeNow(p.path());
        } else {
          send(p.path());
        }
      } catch (RuntimeException e) {
        LOG.debug("Invalidating the kernel's cache of {} failed: {}", p.path(), e.toString());
      }
    }
  }

  private void sendAll() {
    List<String> known = new ArrayList<>(nodes.asMap().keySet());
    for (String path : known) {
      send(path);
    }
  }

  /** Drops the kernel's name of {@code path} and its node's attributes and pages. */
  private synchronized void send(String path) {
    Notifier to = notifier;
    if (to == null) {
      return;
    }
    String parent = PathNames.parent(path);
    Long parentNode =
        parent == null
            ? null
            : parent.equals(PathNames.ROOT) ? Long.valueOf(ROOT_NODE) : nodes.getIfPresent(parent);
    if (parentNode != null) {
      to.invalidateEntry(parentNode, PathNames.name(path));
      sent.increment();
    }
    Long node = path.equals(PathNames.ROOT) ? Long.valueOf(ROOT_NODE) : nodes.getIfPresent(path);
    if (node != null) {
      to.invalidateNode(node);
      sent.increment();
    }
  }

  @Override
  public void close() {
    detach();
    sender.interrupt();
  }
}
