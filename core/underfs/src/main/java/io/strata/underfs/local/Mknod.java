package io.strata.underfs.local;

import io.strata.underfs.UfsFileType;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Platform;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.byref.LongLongByReference;
import jnr.ffi.types.dev_t;
import jnr.ffi.types.mode_t;

/**
 * The C library's mknod(2), which makes FIFOs, sockets and device nodes, and the file type bits of
 * {@code st_mode} that tell those kinds apart.
 *
 * <p>Java has no call that makes these (only the "unix" attribute view, which reads them), so the
 * one C function is bound with jnr-ffi, the binding library jnr-fuse already brings; jnr-ffi needs
 * no code of ours compiled per platform. Its companion jnr-posix offers mkfifo but not mknod, so it
 * would not do. The device number goes to the C library as a whole 64-bit {@code dev_t}, so no bit
 * is lost on the way; Linux itself keeps device numbers in 32 bits (majors up to 4095, minors up to
 * 1048575, for which glibc's {@code makedev} and the kernel's encoding agree), and glibc refuses
 * larger ones with EINVAL.
 *
 * <p>glibc exports {@code mknod} itself since 2.33; before that (RHEL 8, Ubuntu 20.04) only {@code
 * __xmknod}, with a version argument and the device number by reference, which this falls back to.
 * The C library is bound on first use, so a platform without it fails only the calls that make
 * special files, with {@link UnsupportedOperationException}.
 */
final class Mknod {
  /** The file type bits of {@code st_mode}, and each kind's; the same on Linux and the BSDs. */
  static final int S_IFMT = 0170000;

  static final int S_IFIFO = 0010000;
  static final int S_IFCHR = 0020000;
  static final int S_IFBLK = 0060000;
  static final int S_IFSOCK = 0140000;

  /** errno values of Linux (the same on every Linux architecture and on the BSDs). */
  static final int EPERM = 1;

  static final int ENOENT = 2;
  static final int EACCES = 13;
  static final int EEXIST = 17;
  static final int ENOTDIR = 20;
  static final int EINVAL = 22;

  /** The {@code __xmknod} interface version of 64-bit glibc ({@code _MKNOD_VER}). */
  private static final int XMKNOD_VERSION = 0;

  /** The C functions bound. Public because jnr-ffi implements it in a class of its own. */
  public interface LibC {
    @SaveError
    int mknod(CharSequence path, @mode_t int mode, @dev_t long dev);

    @SaveError
    int __xmknod(int version, CharSequence path, @mode_t int mode, @In LongLongByReference dev);

    String strerror(int errno);
  }

  /** Bound on first use: loading a class that merely names {@link Mknod} binds nothing. */
  private static final class Bound {
    static final LibC LIBC;
    static final Runtime RUNTIME;
    static final Throwable FAILURE;

    static {
      LibC libc = null;
      Runtime runtime = null;
      Throwable failure = null;
      try {
        libc =
            LibraryLoader.create(LibC.class)
                .load(Platform.getNativePlatform().getStandardCLibraryName());
        runtime = Runtime.getRuntime(libc);
      } catch (LinkageError | RuntimeException e) {
        failure = e;
      }
      LIBC = libc;
      RUNTIME = runtime;
      FAILURE = failure;
    }
  }

  /** Whether to call {@code __xmknod}: set once {@code mknod} proved missing. */
  private static volatile boolean useXmknod;

  private Mknod() {}

  /** The {@code st_mode} type bits that make a node of {@code type}. */
  static int typeBits(UfsFileType type) {
    return switch (type) {
      case FIFO -> S_IFIFO;
      case SOCKET -> S_IFSOCK;
      case CHAR_DEVICE -> S_IFCHR;
      case BLOCK_DEVICE -> S_IFBLK;
      default -> throw new IllegalArgumentException("Not a FIFO, socket or device node: " + type);
    };
  }

  /**
   * The kind of a FIFO, socket or device node from its {@code st_mode}; null for any other type
   * bits.
   */
  static UfsFileType specialType(int stMode) {
    return switch (stMode & S_IFMT) {
      case S_IFIFO -> UfsFileType.FIFO;
      case S_IFSOCK -> UfsFileType.SOCKET;
      case S_IFCHR -> UfsFileType.CHAR_DEVICE;
      case S_IFBLK -> UfsFileType.BLOCK_DEVICE;
      default -> null;
    };
  }

  /**
   * Makes the node {@code path} of {@code type} with {@code mode} (narrowed by the process umask,
   * as mknod(2) does) and, for a device node, device number {@code rdev}.
   *
   * @param uri the store URI of {@code path}, named in errors
   * @param parentUri the store URI of its parent, named when that is missing
   * @throws FileAlreadyExistsException when the path names an entry
   * @throws NoSuchFileException naming the parent when it does not exist
   * @throws AccessDeniedException when the process may not make the node
   * @throws UnsupportedOperationException when the C library could not be bound
   */
  static void make(Path path, String uri, String parentUri, UfsFileType type, int mode, long rdev)
      throws IOException {
    LibC libc = libc(type);
    int stMode = typeBits(type) | (mode & 07777);
    long dev = type.device() ? rdev : 0;
    String file = path.toString();
    int result;
    if (!useXmknod) {
      try {
        result = libc.mknod(file, stMode, dev);
      } catch (UnsatisfiedLinkError e) {
        useXmknod = true;
        result = xmknod(libc, file, stMode, dev);
      }
    } else {
      result = xmknod(libc, file, stMode, dev);
    }
    if (result != 0) {
      throw failure(LastError.getLastError(Bound.RUNTIME), libc, uri, parentUri, type, dev);
    }
  }

  /** Makes the node with glibc's older entry point; for tests of the fallback too. */
  static int xmknod(LibC libc, String file, int stMode, long dev) {
    return libc.__xmknod(XMKNOD_VERSION, file, stMode, new LongLongByReference(dev));
  }

  /** The bound C library; fails when it could not be bound. */
  static LibC libc(UfsFileType type) {
    if (Bound.LIBC == null) {
      UnsupportedOperationException e =
          new UnsupportedOperationException(
              "file stores cannot"
                  + " hold "
                  + type
                  + " entries on this platform: the C library's mknod could not be"
                  + " bound ("
                  + Bound.FAILURE
                  + ")");
      e.initCause(Bound.FAILURE);
      throw e;
    }
    return Bound.LIBC;
  }

  private static IOException failure(
      int errno, LibC libc, String uri, String parentUri, UfsFileType type, long rdev) {
    String text = libc.strerror(errno);
    return switch (errno) {
      case EEXIST -> new FileAlreadyExistsException(uri);
      case ENOENT ->
          new NoSuchFileException(
              parentUri, null, "the parent directory of " + uri + " does not exist");
      case EPERM, EACCES ->
          new AccessDeniedException(
              uri,
              null,
              type.device() && errno == EPERM
                  ? "making a device node needs the CAP_MKNOD capability, which this process lacks:"
                      + " run it as root outside any user namespace (a container must keep the"
                      + " capability), or grant it with setcap cap_mknod+ep ("
                      + text
                      + ")"
                  : "not permitted to make a " + type + " here (" + text + ")");
      case ENOTDIR ->
          new FileSystemException(uri, null, "a parent of it is not a directory (" + text + ")");
      case EINVAL ->
          new FileSystemException(
              uri,
              null,
              type.device()
                  ? "device number 0x"
                      + Long.toHexString(rdev)
                      + " is beyond what Linux holds (major"
                      + " up to 4095, minor up to 1048575, as glibc's makedev encodes them)"
                  : "mknod of a " + type + " refused: " + text);
      default ->
          new FileSystemException(
              uri, null, "mknod of a " + type + " failed: errno " + errno + " (" + text + ")");
    };
  }
}
