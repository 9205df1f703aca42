package io.strata.underfs.local;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Platform;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.SaveError;

/**
 * A path of any length as one the kernel takes, valid until closed. Linux refuses a path string of
 * PATH_MAX (4096) bytes or more with ENAMETOOLONG, however short each of its names; a folder that
 * deep can still be reached a piece at a time.
 *
 * <p>A path shorter than {@link #THRESHOLD} bytes is used as it is, with no system call and no
 * descriptor. A longer one is cut at '/' into pieces each under {@link #THRESHOLD} bytes; the
 * folder every piece but the last names is opened with openat(2) ({@code O_PATH}, which needs no
 * read permission, and {@code O_CLOEXEC}) relative to the one before, each closed as soon as the
 * next is open, and the path becomes {@code /proc/self/fd/N/last-piece}: the kernel resolves {@code
 * /proc/self/fd/N} as the folder itself, so java.nio can use the result for any call. Symbolic
 * links in the folders are followed as they would be in the whole path, so the result names what
 * the whole path names; a link as the last name is left to the call.
 *
 * <p>Descriptors are never kept across operations: a folder renamed meanwhile would leave a kept
 * one pointing at its new place. Close the handle right after the calls that use {@link #path()};
 * an open channel or directory stream keeps a descriptor of its own.
 *
 * <p>Exceptions from calls on {@link #path()} name the {@code /proc} path; {@link #named} names the
 * original path in them instead. A failure to open a folder is thrown naming the original path, as
 * java.nio names it: NoSuchFileException, AccessDeniedException, or a FileSystemException with the
 * C library's text.
 *
 * <p>Long paths need Linux with {@code /proc} mounted and its C library bound through jnr-ffi (as
 * {@link Mknod} binds mknod); elsewhere a path of PATH_MAX bytes or more fails as the kernel would
 * fail it, with "File name too long".
 */
final class LongPath implements AutoCloseable {
  /**
   * Paths shorter than this many bytes are used as they are. Below PATH_MAX (4096) with room for
   * the {@code /proc/self/fd/N/} before a last piece (at most 25 bytes) and a 255-byte name after
   * it.
   */
  static final int THRESHOLD = 3800;

  /** The longest path, in bytes, the kernel takes as a whole (PATH_MAX less its NUL). */
  static final int PATH_MAX_BYTES = 4095;

  /**
   * The longest path, in bytes, held at all: sixteen times PATH_MAX, far past any real tree (a path
   * of 64 KiB is over 250 folders of 255-byte names), and a bound on the opens one call makes
   * (under 20). Longer paths fail with "File name too long".
   */
  static final int LONGEST = 64 * 1024;

  private static final String PROC_FD = "/proc/self/fd/";

  /** How java.nio encodes paths for the kernel (the JDK's own choice on Unix). */
  private static final Charset ENCODING = jnuEncoding();

  /** The path as given. */
  private final Path original;

  /** The path to hand java.nio: {@link #original} when short. */
  private final Path path;

  /** The descriptor {@link #path} goes through; -1 when none. */
  private int fd;

  /** {@code /proc/self/fd/N/}; null when short. */
  private final String procPrefix;

  /** The part of the original path the descriptor stands for, with its final '/'. */
  private final String originalPrefix;

  private LongPath(Path original, Path path, int fd, String procPrefix, String originalPrefix) {
    this.original = original;
    this.path = path;
    this.fd = fd;
    this.procPrefix = procPrefix;
    this.originalPrefix = originalPrefix;
  }

  /**
   * {@code p} as a path the kernel takes, to be closed after use.
   *
   * @throws NoSuchFileException naming {@code p} when a folder on the way does not exist
   * @throws AccessDeniedException naming {@code p} when one may not be searched
   * @throws FileSystemException naming {@code p} when a folder on the way is not one, when {@code
   *     p} is longer than {@link #LONGEST} bytes, or when it is PATH_MAX bytes or longer on a
   *     platform that cannot hold such paths
   */
  static LongPath open(Path p) throws IOException {
    String whole = p.toString();
    // Every character takes a byte or more: most paths are known short without encoding them.
    if (whole.length() < THRESHOLD / 4) {
      return new LongPath(p, p, -1, null, null);
    }
    byte[] bytes = whole.getBytes(ENCODING);
    if (bytes.length < THRESHOLD || (bytes.length <= PATH_MAX_BYTES && Bound.FAILURE != null)) {
      return new LongPath(p, p, -1, null, null);
    }
    if (bytes.length > LONGEST) {
      throw new FileSystemException(
          whole,
          null,
          "File name too long ("
              + bytes.length
              + " bytes; this store holds paths of up to "
              + LONGEST
              + ")");
    }
    if (Bound.FAILURE != null) {
      throw new FileSystemException(
          whole,
          null,
          "File name too long ("
              + bytes.length
              + " bytes; paths of "
              + (PATH_MAX_BYTES + 1)
              + " bytes or more need Linux with /proc"
              + " and its C library: "
              + Bound.FAILURE
              + ")");
    }
    int fd = AT_FDCWD;
    int start = 0;
    try {
      while (bytes.length - start >= THRESHOLD) {
        int cut = lastSlash(bytes, start + 1, start + THRESHOLD - 1);
        if (cut < 0) {
          throw new FileSystemException(
              whole, null, "File name too long (a name of more than " + THRESHOLD + " bytes)");
        }
        byte[] piece = Arrays.copyOfRange(bytes, start, cut + 1);
        piece[piece.length - 1] = 0;
        // No O_DIRECTORY (its value differs between architectures): a piece that ends at a
        // file fails at the next step with ENOTDIR, as the whole path would.
        int next = Bound.LIBC.openat(fd, piece, O_PATH | O_CLOEXEC, 0);
        int errno = next < 0 ? LastError.getLastError(Bound.RUNTIME) : 0;
        closeQuietly(fd);
        fd = next;
        if (next < 0) {
          throw failure(whole, errno);
        }
        start = cut + 1;
      }
    } catch (IOException | RuntimeException | Error e) {
      closeQuietly(fd);
      throw e;
    }
    String procPrefix = PROC_FD + fd + "/";
    String last = new String(bytes, start, bytes.length - start, ENCODING);
    String originalPrefix = new String(bytes, 0, start, ENCODING);
    return new LongPath(p, Path.of(procPrefix + last), fd, procPrefix, originalPrefix);
  }

  /** Whether {@link #open} refuses {@code p} for its length alone. */
  static boolean tooLong(Path p) {
    String whole = p.toString();
    if (whole.length() < THRESHOLD / 4) {
      return false;
    }
    int length = whole.getBytes(ENCODING).length;
    return length > LONGEST || (length > PATH_MAX_BYTES && Bound.FAILURE != null);
  }

  /** The path to hand java.nio: the original when short, else {@code /proc/self/fd/N/...}. */
  Path path() {
    return path;
  }

  /**
   * {@code e} naming this handle's original path (and the original paths below it) where it names
   * the {@code /proc} path; {@code e} itself when it names neither. Works after {@link #close} too.
   * The stack trace is kept; the exception with the {@code /proc} path is not made the cause, so
   * that no log names it.
   */
  IOException named(IOException e) {
    if (procPrefix == null || !(e instanceof FileSystemException f)) {
      return e;
    }
    String file = original(f.getFile());
    String other = original(f.getOtherFile());
    if (Objects.equals(file, f.getFile()) && Objects.equals(other, f.getOtherFile())) {
      return e;
    }
    String reason = f.getReason();
    FileSystemException renamed;
    if (f instanceof NoSuchFileException) {
      renamed = new NoSuchFileException(file, other, reason);
    } else if (f instanceof FileAlreadyExistsException) {
      renamed = new FileAlreadyExistsException(file, other, reason);
    } else if (f instanceof AccessDeniedException) {
      renamed = new AccessDeniedException(file, other, reason);
    } else if (f instanceof DirectoryNotEmptyException) {
      renamed = new DirectoryNotEmptyException(file);
    } else if (f instanceof NotDirectoryException) {
      renamed = new NotDirectoryException(file);
    } else if (f instanceof NotLinkException) {
      renamed = new NotLinkException(file, other, reason);
    } else if (f instanceof AtomicMoveNotSupportedException) {
      renamed = new AtomicMoveNotSupportedException(file, other, reason);
    } else if (f instanceof FileSystemLoopException) {
      renamed = new FileSystemLoopException(file);
    } else {
      renamed = new FileSystemException(file, other, reason);
    }
    renamed.setStackTrace(f.getStackTrace());
    for (Throwable s : f.getSuppressed()) {
      renamed.addSuppressed(s);
    }
    return renamed;
  }

  /** {@code s} with the {@code /proc} prefix put back as the original; s itself otherwise. */
  private String original(String s) {
    if (s == null) {
      return null;
    }
    if (s.startsWith(procPrefix)) {
      return originalPrefix + s.substring(procPrefix.length());
    }
    if (s.equals(procPrefix.substring(0, procPrefix.length() - 1))) {
      return originalPrefix.substring(0, originalPrefix.length() - 1);
    }
    return s;
  }

  @Override
  public void close() {
    closeQuietly(fd);
    fd = -1;
  }

  @Override
  public String toString() {
    return original.toString();
  }

  /** The last '/' in {@code bytes[from..to]}; -1 when there is none. */
  private static int lastSlash(byte[] bytes, int from, int to) {
    for (int i = Math.min(to, bytes.length - 1); i >= from; i--) {
      if (bytes[i] == '/') {
        return i;
      }
    }
    return -1;
  }

  /** A failed open of a folder on the way, as java.nio reports the errno for the whole path. */
  private static IOException failure(String whole, int errno) {
    return switch (errno) {
      case ENOENT -> new NoSuchFileException(whole);
      case EACCES -> new AccessDeniedException(whole);
      default -> new FileSystemException(whole, null, Bound.LIBC.strerror(errno));
    };
  }

  private static void closeQuietly(int fd) {
    if (fd >= 0) {
      // close(2) of an O_PATH descriptor releases it even when it reports an error.
      Bound.LIBC.close(fd);
    }
  }

  private static Charset jnuEncoding() {
    String name = System.getProperty("sun.jnu.encoding");
    try {
      return name == null ? Charset.defaultCharset() : Charset.forName(name);
    } catch (IllegalArgumentException e) {
      return StandardCharsets.UTF_8;
    }
  }

  /** openat(2)'s "relative to the working folder", which an absolute first piece ignores. */
  private static final int AT_FDCWD = -100;

  /** Linux's flags, the same on the architectures {@link Bound} accepts. */
  private static final int O_PATH = 010000000;

  private static final int O_CLOEXEC = 02000000;
  private static final int ENOENT = 2;
  private static final int EACCES = 13;

  /** Architectures whose {@code O_PATH} and {@code O_CLOEXEC} are Linux's generic values. */
  private static final Set<Platform.CPU> GENERIC_FLAGS =
      Set.of(
          Platform.CPU.X86_64,
          Platform.CPU.I386,
          Platform.CPU.AARCH64,
          Platform.CPU.ARM,
          Platform.CPU.PPC,
          Platform.CPU.PPC64,
          Platform.CPU.PPC64LE,
          Platform.CPU.S390X,
          Platform.CPU.RISCV64,
          Platform.CPU.LOONGARCH64);

  /** The C functions bound. Public because jnr-ffi implements it in a class of its own. */
  public interface LibC {
    /** Bound with the mode argument, as jnr-posix binds the variadic open. */
    @SaveError
    int openat(int dirfd, @In byte[] path, int flags, int mode);

    int close(int fd);

    String strerror(int errno);
  }

  /** Bound on first use; FAILURE says why long paths cannot be held here. */
  private static final class Bound {
    static final LibC LIBC;
    static final Runtime RUNTIME;
    static final Object FAILURE;

    static {
      LibC libc = null;
      Runtime runtime = null;
      Object failure = null;
      Platform platform = Platform.getNativePlatform();
      if (platform.getOS() != Platform.OS.LINUX || !GENERIC_FLAGS.contains(platform.getCPU())) {
        failure =
            "not Linux on an architecture with the generic open flags ("
                + platform.getOS()
                + " "
                + platform.getCPU()
                + ")";
      } else if (!Files.isDirectory(Path.of(PROC_FD))) {
        failure = PROC_FD + " is not there (is /proc mounted?)";
      } else {
        try {
          libc = LibraryLoader.create(LibC.class).load(platform.getStandardCLibraryName());
          runtime = Runtime.getRuntime(libc);
        } catch (LinkageError | RuntimeException e) {
          failure = e;
        }
      }
      LIBC = failure == null ? libc : null;
      RUNTIME = runtime;
      FAILURE = failure;
    }
  }
}
