package io.strata.fuse;

import io.strata.common.DaemonThreads;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.byref.PointerByReference;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import ru.serce.jnrfuse.struct.FuseOperations;

/**
 * Serves one FUSE mount from a fixed set of Java threads, each of which reads requests from the
 * kernel and answers them itself for as long as the mount lives.
 *
 * <p>Why not libfuse's own multithreaded loop (what jnr-fuse's {@code mount} runs): that loop
 * starts native threads as requests pile up and ends them when more than ten are idle, and jnr-ffi
 * attaches every native thread that calls into Java as a new Java thread, then detaches it. Under
 * concurrent reads the mount started and ended more than one Java thread for every two reads, and a
 * read waited for that far longer than for the mount's own code. Threads that the JVM started are
 * attached for good, so an upcall on them costs only the call itself.
 *
 * <p>This is libfuse 2's {@code fuse_session_loop} run by each thread, on the mount that {@code
 * fuse_main} sets up ({@code fuse_setup} with the same arguments and operations table): reads from
 * {@code /dev/fuse} by several threads are safe, each request goes to exactly one reader, and
 * libfuse's high-level layer locks its own state. Every thread has its own request buffer. When the
 * mount goes away the kernel answers every pending read with ENODEV, libfuse marks the session
 * exited, and the threads end; then {@code fuse_teardown} releases the channel and session, as
 * {@code fuse_main} does.
 */
final class UpcallThreads {
  private static final Logger LOG = LoggerFactory.getLogger(UpcallThreads.class);
  private static final int EINTR = 4;

  /**
   * The libfuse 2 calls a session loop needs; jnr-fuse's own interface has only fuse_main. {@code
   * fuse_setup} and {@code fuse_teardown} rather than {@code fuse_mount} and {@code fuse_new},
   * because an unversioned {@code fuse_new} in libfuse.so.2 is the libfuse 1 call, and that is the
   * one a plain symbol lookup finds.
   */
  public interface LibFuseSession {
    Pointer fuse_setup(
        int argc,
        String[] argv,
        FuseOperations operations,
        @size_t long operationsSize,
        PointerByReference mountPoint,
        IntByReference multithreaded,
        Pointer userData);

    void fuse_teardown(Pointer fuse, Pointer mountPoint);

    Pointer fuse_get_session(Pointer fuse);

    int fuse_session_exited(Pointer session);

    void fuse_session_exit(Pointer session);

    Pointer fuse_session_next_chan(Pointer session, Pointer channel);

    /** {@code channelSlot} holds a {@code struct fuse_chan *}; libfuse may replace it. */
    int fuse_chan_recv(Pointer channelSlot, Pointer buffer, @size_t long size);

    void fuse_session_process(
        Pointer session, Pointer buffer, @size_t long length, Pointer channel);

    @size_t
    long fuse_chan_bufsize(Pointer channel);

    /**
     * Drops the kernel's attributes of a node, and its pages from {@code offset} ({@code length} 0:
     * to the end).
     */
    int fuse_lowlevel_notify_inval_inode(Pointer channel, long node, long offset, long length);

    /** Drops the kernel's name in a folder; {@code name} must end with a NUL byte. */
    int fuse_lowlevel_notify_inval_entry(
        Pointer channel, long parent, @In byte[] name, @size_t long nameLength);

    /**
     * A channel whose operations are {@code ops} (struct fuse_chan_ops: receive, send, destroy), on
     * device {@code fd}; libfuse copies the table.
     */
    Pointer fuse_chan_new(Pointer ops, int fd, @size_t long bufferSize, Pointer data);

    int fuse_chan_fd(Pointer channel);

    void fuse_chan_destroy(Pointer channel);
  }

  /** The one C library call the reply channel needs. */
  public interface LibC {
    @SaveError
    @ssize_t
    long writev(int fd, Pointer iov, int count);
  }

  /** struct fuse_chan_ops's send: writes one reply, given as an iovec array, to the kernel. */
  public interface ReplySender {
    @Delegate
    int send(Pointer channel, Pointer iov, @size_t long count);
  }

  /**
   * The header of the request an upcall thread is handling: its opcode and the node id the kernel
   * named, for handlers that need what libfuse's path-based API hides.
   */
  static final class Request {
    int opcode;
    long node;

    /** For a link, the node id of the file linked (struct fuse_link_in); 0 otherwise. */
    long linkedNode;

    /**
     * The mount path the handler named in the kernel's entry for it (lookup, create, mkdir, mknod,
     * symlink, link), so that the node id in the answer can be learnt; null otherwise.
     */
    String entryPath;
  }

  private static final int FUSE_LOOKUP = 1;
  private static final int FUSE_SYMLINK = 6;
  private static final int FUSE_MKNOD = 8;
  private static final int FUSE_MKDIR = 9;
  private static final int FUSE_LINK = 13;
  private static final int FUSE_CREATE = 35;
  private static final int IN_HEADER_SIZE = 40;
  private static final int OUT_HEADER_ERROR = 4;
  private static final int IOVEC_SIZE = 16;
  private static final int EIO = 5;

  private static final ThreadLocal<Request> CURRENT = new ThreadLocal<>();

  /** The request the calling upcall thread is handling; null on any other thread. */
  static Request current() {
    return CURRENT.get();
  }

  /** Loads libfuse at first use, once (the holder class idiom: the JVM does the locking). */
  private static final class Library {
    static final LibFuseSession LIB =
        LibraryLoader.create(LibFuseSession.class).failImmediately().load("libfuse.so.2");
    static final LibC C = LibraryLoader.create(LibC.class).failImmediately().load("c");
  }

  private final String mountPoint;
  private final Pointer fuse;
  private final Pointer mountPointCopy;
  private final Pointer session;
  private final Pointer channel;
  private final long bufferSize;

  /**
   * The channel requests that make a kernel entry are answered on: the same device, with a send
   * that learns the node id libfuse gave the name (see {@link #sendReply}); null without a kernel
   * cache to tell.
   */
  private final Pointer entryChannel;

  private final int deviceFd;

  // Held so the native send pointer stays valid while the channel lives; never read.
  @SuppressWarnings("UnusedVariable")
  private final ReplySender replySender;

  // Held likewise: the operations table fuse_chan_new copied.
  @SuppressWarnings("UnusedVariable")
  private final Pointer entryChannelOps;

  // Held so the callbacks libfuse points at stay reachable while it serves; never read.
  @SuppressWarnings("UnusedVariable")
  private final FuseOperations operations;

  private final List<Thread> threads = new ArrayList<>();
  private final KernelEntries kernel;

  private UpcallThreads(
      String mountPoint,
      Pointer fuse,
      Pointer mountPointCopy,
      FuseOperations operations,
      KernelEntries kernel) {
    this.kernel = kernel;
    LibFuseSession lib = library();
    this.mountPoint = mountPoint;
    this.fuse = fuse;
    this.mountPointCopy = mountPointCopy;
    this.operations = operations;
    this.session = lib.fuse_get_session(fuse);
    this.channel = lib.fuse_session_next_chan(session, null);
    this.bufferSize = lib.fuse_chan_bufsize(channel);
    this.deviceFd = lib.fuse_chan_fd(channel);
    if (kernel != null) {
      Runtime runtime = Runtime.getRuntime(lib);
      this.replySender = this::sendReply;
      Pointer ops = Memory.allocateDirect(runtime, 3 * runtime.addressSize(), true);
      ops.putPointer(
          runtime.addressSize(),
          runtime.getClosureManager().getClosurePointer(ReplySender.class, replySender));
      this.entryChannelOps = ops;
      this.entryChannel = lib.fuse_chan_new(ops, deviceFd, bufferSize, null);
    } else {
      this.replySender = null;
      this.entryChannelOps = null;
      this.entryChannel = null;
    }
  }

  private static LibFuseSession library() {
    return Library.LIB;
  }

  /**
   * Mounts {@code operations} at {@code mountPoint} with libfuse arguments {@code args} (pairs of
   * {@code "-o", "a,b=1"}, as {@code fuse_main} takes them after the mount point) and serves it on
   * {@code threadCount} threads named after the mount. Returns once the mount exists; the threads
   * serve until it is unmounted.
   *
   * @param name the file system's name; as with {@code fuse_main}, the mount's type is {@code
   *     fuse.NAME} unless the arguments give a subtype or fsname
   * @throws IllegalStateException when libfuse refuses the arguments or the mount (it has printed
   *     why on standard error)
   */
  static UpcallThreads mount(
      Path mountPoint,
      String name,
      List<String> args,
      FuseOperations operations,
      int threadCount,
      KernelEntries kernel) {
    LibFuseSession lib = library();
    List<String> argv = new ArrayList<>(List.of(name, "-f", mountPoint.toString()));
    argv.addAll(args);
    PointerByReference mountPointCopy = new PointerByReference();
    IntByReference multithreaded = new IntByReference();
    Pointer fuse =
        lib.fuse_setup(
            argv.size(),
            argv.toArray(new String[0]),
            operations,
            Struct.size(operations),
            mountPointCopy,
            multithreaded,
            null);
    if (fuse == null) {
      throw new IllegalStateException(
          "libfuse refused to mount at "
              + mountPoint
              + " with options "
              + args
              + " (it printed why on standard error)");
    }
    UpcallThreads served =
        new UpcallThreads(
            mountPoint.toString(), fuse, mountPointCopy.getValue(), operations, kernel);
    if (kernel != null) {
      kernel.attach(served.notifier());
    }
    served.start(threadCount, name);
    return served;
  }

  private void start(int threadCount, String name) {
    for (int i = 0; i < threadCount; i++) {
      Thread t = DaemonThreads.daemon(this::serve, name + "-fuse-upcall-" + i);
      threads.add(t);
    }
    threads.forEach(Thread::start);
    LOG.info(
        "Serving FUSE requests of {} on {} threads, {} KiB request buffer each",
        mountPoint,
        threadCount,
        bufferSize / 1024);
  }

  /** One thread's loop: what libfuse 2's fuse_session_loop does, on a buffer of its own. */
  private void serve() {
    LibFuseSession lib = library();
    Runtime runtime = Runtime.getRuntime(lib);
    Pointer buffer = Memory.allocateDirect(runtime, (int) bufferSize);
    Pointer from = Memory.allocateDirect(runtime, runtime.addressSize());
    Request request = new Request();
    CURRENT.set(request);
    try {
      while (lib.fuse_session_exited(session) == 0) {
        from.putPointer(0, channel);
        int length = lib.fuse_chan_recv(from, buffer, bufferSize);
        if (length == -EINTR) {
          continue;
        }
        if (length <= 0) {
          if (length < 0) {
            // An error other than the mount going away (that one reads as 0): stop serving,
            // as fuse_session_loop does, rather than spin on it.
            LOG.warn(
                "Reading FUSE requests of {} failed with errno {}; the mount stops" + " serving",
                mountPoint,
                -length);
            lib.fuse_session_exit(session);
          }
          break;
        }
        // struct fuse_in_header: len, opcode (offset 4), unique, nodeid (offset 16), ...
        request.opcode = buffer.getInt(4);
        request.node = buffer.getLong(16);
        request.linkedNode =
            request.opcode == FUSE_LINK && length >= IN_HEADER_SIZE + 8
                ? buffer.getLong(IN_HEADER_SIZE)
                : 0;
        request.entryPath = null;
        Pointer answerOn =
            entryChannel != null && makesEntry(request.opcode) ? entryChannel : from.getPointer(0);
        lib.fuse_session_process(session, buffer, length, answerOn);
      }
    } catch (RuntimeException | Error e) {
      LOG.error("A FUSE upcall thread of {} failed; the mount stops serving", mountPoint, e);
      lib.fuse_session_exit(session);
    }
  }

  private static boolean makesEntry(int opcode) {
    return switch (opcode) {
      case FUSE_LOOKUP, FUSE_SYMLINK, FUSE_MKNOD, FUSE_MKDIR, FUSE_LINK, FUSE_CREATE -> true;
      default -> false;
    };
  }

  /**
   * The entry channel's send, called by libfuse on the thread that handles the request: writes the
   * reply to the device as libfuse's own channel does ({@code writev}, -errno on failure, ENOENT
   * when the request was interrupted), and once the kernel has taken a successful entry, records
   * the node id in it (struct fuse_entry_out begins with it) as the node of the path the handler
   * named.
   *
   * <p>Why: libfuse 2's path API gives every name its own kernel node and keeps the ids to itself,
   * and the kernel drops a node's attributes only by id. Without it, a name learnt only from a
   * lookup (another name of a hard-linked file, say) could be dropped only by its folder, which the
   * request changing the file may hold locked, so it was dropped after the reply and a stat right
   * after could still show the old link count.
   */
  private int sendReply(Pointer ignoredChannel, Pointer iov, long count) {
    try {
      if (iov == null || count == 0) {
        return 0;
      }
      long written = Library.C.writev(deviceFd, iov, (int) count);
      if (written < 0) {
        return -Runtime.getRuntime(Library.C).getLastError();
      }
      Request r = CURRENT.get();
      if (r != null && r.entryPath != null && count >= 2) {
        Pointer header = iov.getPointer(0);
        Pointer entry = iov.getPointer(IOVEC_SIZE);
        if (header.getInt(OUT_HEADER_ERROR) == 0 && entry != null) {
          long node = entry.getLong(0);
          if (node != 0) {
            kernel.seenNode(r.entryPath, node);
          }
        }
      }
      return 0;
    } catch (RuntimeException | Error e) {
      LOG.error("Answering a FUSE request of {} failed", mountPoint, e);
      return -EIO;
    }
  }

  /**
   * Waits until every thread has ended (the mount went away), then releases libfuse's channel and
   * session as {@code fuse_main} does when its loop returns.
   */
  void awaitEnd() throws InterruptedException {
    for (Thread t : threads) {
      t.join();
    }
    if (kernel != null) {
      // No invalidation may reach the channel once libfuse has released it.
      kernel.detach();
    }
    if (entryChannel != null) {
      // Never added to the session: libfuse's teardown does not know it.
      library().fuse_chan_destroy(entryChannel);
    }
    library().fuse_teardown(fuse, mountPointCopy);
  }

  /** Sends invalidations to the kernel through this mount's channel. */
  private KernelEntries.Notifier notifier() {
    LibFuseSession lib = library();
    return new KernelEntries.Notifier() {
      @Override
      public void invalidateEntry(long parent, String name) {
        byte[] bytes = (name + "\0").getBytes(StandardCharsets.UTF_8);
        lib.fuse_lowlevel_notify_inval_entry(channel, parent, bytes, bytes.length - 1);
      }

      @Override
      public void invalidateNode(long node) {
        lib.fuse_lowlevel_notify_inval_inode(channel, node, 0, 0);
      }
    };
  }

  int threadCount() {
    return threads.size();
  }
}
