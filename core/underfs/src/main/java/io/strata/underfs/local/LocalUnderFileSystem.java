package io.strata.underfs.local;

import io.strata.underfs.StreamedConcat;
import io.strata.underfs.UfsFileType;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.UUID;

/**
 * An under store on a local (or NFS-mounted) folder, addressed as {@code file:///abs/path}. Writes
 * go to a hidden temporary file beside the target and are moved into place atomically on close, so
 * a reader never sees a half-written file under its final name; concatenations too, copied file to
 * file by the kernel.
 *
 * <p>It holds every kind of entry a POSIX file system holds: symbolic links, FIFOs, sockets, device
 * nodes (where the process has CAP_MKNOD) and hard links. Entries are described as lstat describes
 * them, links not followed; the kind of a FIFO, socket or device node and a device's number come
 * from the JDK's "unix" attribute view, so this store needs a Unix JDK.
 *
 * <p>It holds paths of any length up to {@link LongPath#LONGEST} bytes, not only those under
 * Linux's PATH_MAX of 4096: every call goes through {@link LocalFiles}, which reaches a longer path
 * a piece at a time through descriptors of its folders ({@link LongPath}), and names the path given
 * in its errors.
 */
public final class LocalUnderFileSystem implements UnderFileSystem {
  /** Marker in the names of in-progress writes; such files are hidden from listings. */
  static final String TEMP_MARKER = UnderFileSystem.TEMP_MARKER;

  @Override
  public String scheme() {
    return "file";
  }

  static Path toPath(String uri) {
    if (uri.startsWith("file://")) {
      String rest = uri.substring("file://".length());
      if (!rest.startsWith("/")) {
        throw new IllegalArgumentException("file URIs need an absolute path: " + uri);
      }
      return Path.of(rest);
    }
    if (uri.startsWith("/")) {
      return Path.of(uri);
    }
    throw new IllegalArgumentException("Not a file:// URI: " + uri);
  }

  /** The entry itself, as lstat describes it: a symbolic link is not followed. */
  @Override
  public UfsStatus getStatus(String uri) throws IOException {
    return status(uri, LinkOption.NOFOLLOW_LINKS);
  }

  /** What the path leads to, as stat describes it: symbolic links are followed. */
  @Override
  public UfsStatus getTargetStatus(String uri) throws IOException {
    return status(uri);
  }

  private static UfsStatus status(String uri, LinkOption... options) throws IOException {
    Path p = toPath(uri);
    try {
      return toStatus(
          p.getFileName() == null ? "" : p.getFileName().toString(),
          p,
          LocalFiles.readAttributes(p, PosixFileAttributes.class, options),
          options);
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(uri);
    }
  }

  /**
   * A stat and nothing more: a whole status also names the owner and group, which looks them up in
   * the user and group databases at every call, and readers check fingerprints at every uncached
   * read.
   */
  @Override
  public String fingerprint(String uri) throws IOException {
    Path p = toPath(uri);
    try {
      BasicFileAttributes a =
          LocalFiles.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      return a.isSymbolicLink()
          ? linkFingerprint(LocalFiles.readSymbolicLink(p).toString())
          : fingerprint(a);
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(uri);
    }
  }

  /** Length and mtime of a regular file; "" for what has no content of its own. */
  private static String fingerprint(BasicFileAttributes a) {
    return a.isRegularFile() ? a.size() + ":" + a.lastModifiedTime().toMillis() : "";
  }

  /** A link's content is its target text: it changes exactly when that does. */
  private static String linkFingerprint(String target) {
    return "link:" + target;
  }

  /**
   * The status of {@code p}, whose attributes {@code a} were read with {@code options}. The kind of
   * a FIFO, socket or device node, and a device's number, take one more stat (of the "unix" view):
   * PosixFileAttributes call them all "other".
   */
  private static UfsStatus toStatus(
      String name, Path p, PosixFileAttributes a, LinkOption... options) throws IOException {
    long mtime = a.lastModifiedTime().toMillis();
    int mode = toMode(a.permissions());
    String owner = a.owner().getName();
    String group = a.group().getName();
    if (a.isDirectory()) {
      return new UfsStatus(name, true, 0, mtime, mode, owner, group, "");
    }
    if (a.isRegularFile()) {
      return new UfsStatus(name, false, a.size(), mtime, mode, owner, group, fingerprint(a));
    }
    if (a.isSymbolicLink()) {
      String target = LocalFiles.readSymbolicLink(p).toString();
      // lstat's size of a link is the byte length of its target text.
      return new UfsStatus(
          name,
          false,
          a.size(),
          mtime,
          mode,
          owner,
          group,
          linkFingerprint(target),
          UfsFileType.SYMLINK,
          target,
          0);
    }
    Map<String, Object> unix = LocalFiles.readAttributes(p, "unix:mode,rdev", options);
    UfsFileType type = Mknod.specialType((Integer) unix.get("mode"));
    if (type == null) {
      throw new FileSystemException(
          "file://" + p,
          null,
          "an entry of an unknown kind (st_mode "
              + Integer.toOctalString((Integer) unix.get("mode"))
              + ")");
    }
    return new UfsStatus(
        name,
        false,
        0,
        mtime,
        mode,
        owner,
        group,
        "",
        type,
        "",
        type.device() ? (Long) unix.get("rdev") : 0);
  }

  private static int toMode(Set<PosixFilePermission> perms) {
    int mode = 0;
    for (PosixFilePermission p : perms) {
      mode |= 1 << (8 - p.ordinal());
    }
    return mode;
  }

  /** Whether the entry is there; a dangling symbolic link is. */
  @Override
  public boolean exists(String uri) {
    return LocalFiles.exists(toPath(uri), LinkOption.NOFOLLOW_LINKS);
  }

  @Override
  public CloseableIterator<UfsStatus> list(String uri) throws IOException {
    Path dir = toPath(uri);
    if (!LocalFiles.isDirectory(dir)) {
      if (!LocalFiles.exists(dir)) {
        throw new NoSuchFileException(uri);
      }
      throw new IOException("Not a directory in the under store: " + uri);
    }
    DirectoryStream<Path> stream = LocalFiles.newDirectoryStream(dir);
    Iterator<Path> paths = stream.iterator();
    return new CloseableIterator<>() {
      private UfsStatus next;

      @Override
      public boolean hasNext() {
        while (next == null && paths.hasNext()) {
          Path p = paths.next();
          String name = p.getFileName().toString();
          if (name.contains(TEMP_MARKER)) {
            continue;
          }
          try {
            next =
                toStatus(
                    name,
                    p,
                    LocalFiles.readAttributes(
                        p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS),
                    LinkOption.NOFOLLOW_LINKS);
          } catch (IOException e) {
            // Deleted or replaced between listing and stat: not part of the listing.
            next = null;
          }
        }
        return next != null;
      }

      @Override
      public UfsStatus next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        UfsStatus s = next;
        next = null;
        return s;
      }

      @Override
      public void close() throws IOException {
        stream.close();
      }
    };
  }

  @Override
  public int read(String uri, long position, byte[] buffer, int offset, int length)
      throws IOException {
    Path p = toPath(uri);
    try (FileChannel ch = LocalFiles.open(p, StandardOpenOption.READ)) {
      ByteBuffer dst = ByteBuffer.wrap(buffer, offset, length);
      int total = 0;
      while (dst.hasRemaining()) {
        int n = ch.read(dst, position + total);
        if (n < 0) {
          break;
        }
        total += n;
      }
      return total == 0 && length > 0 ? -1 : total;
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(uri);
    }
  }

  /** Reads with positioned channel reads straight into {@code dst}, with no copy in between. */
  @Override
  public int read(String uri, long position, ByteBuffer dst) throws IOException {
    Path p = toPath(uri);
    try (FileChannel ch = LocalFiles.open(p, StandardOpenOption.READ)) {
      int wanted = dst.remaining();
      int total = 0;
      while (dst.hasRemaining()) {
        int n = ch.read(dst, position + total);
        if (n < 0) {
          break;
        }
        total += n;
      }
      return total == 0 && wanted > 0 ? -1 : total;
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(uri);
    }
  }

  /**
   * The hidden temporary file beside {@code uri}'s target that a write fills before {@link
   * #publish} moves it into place; checks first that the target may be written.
   */
  private static Path tempFor(String uri, Path target, boolean overwrite) throws IOException {
    if (!overwrite && LocalFiles.exists(target, LinkOption.NOFOLLOW_LINKS)) {
      throw new FileAlreadyExistsException(uri);
    }
    Path parent = target.getParent();
    if (parent == null || !LocalFiles.isDirectory(parent)) {
      throw new NoSuchFileException(parent == null ? uri : "file://" + parent);
    }
    return tempBeside(target);
  }

  /**
   * A hidden name beside {@code target}, unique, that listings leave out. It begins with the
   * target's name, cut to {@link #TEMP_NAME_PREFIX} characters: the whole must stay within the 255
   * bytes a name may have, whatever the target's (a 255-byte name is legal).
   */
  static Path tempBeside(Path target) {
    String name = target.getFileName().toString();
    if (name.length() > TEMP_NAME_PREFIX) {
      name = name.substring(0, TEMP_NAME_PREFIX);
    }
    return target.resolveSibling("." + name + TEMP_MARKER + UUID.randomUUID());
  }

  /** Characters of the target's name a temporary name begins with (at most 4 bytes each). */
  private static final int TEMP_NAME_PREFIX = 40;

  /**
   * Gives a complete temporary file its mode and moves it onto its target in one rename, so a
   * reader sees the old file or the new one, never a part; deletes it when that fails.
   *
   * @return the target's status once in place
   */
  private UfsStatus publish(Path temp, Path target, String uri, boolean overwrite, int mode)
      throws IOException {
    try {
      if (mode != 0) {
        LocalFiles.setPosixFilePermissions(temp, fromMode(mode));
      }
      if (overwrite) {
        LocalFiles.move(
            temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } else {
        publishExclusive(temp, target, uri);
      }
      return getStatus(uri);
    } catch (IOException e) {
      LocalFiles.deleteIfExists(temp);
      throw e;
    }
  }

  /**
   * Puts a complete temporary file at a target that must not exist, refusing atomically: new files
   * are written before the master decides whose a name is (one call per new file), so two writers
   * of one name may publish at the same moment and exactly one must win. A hard link refuses an
   * existing target in one step; on a file system without hard links, a move after a check (a loser
   * may replace a winner that published in between).
   */
  private static void publishExclusive(Path temp, Path target, String uri) throws IOException {
    try {
      LocalFiles.createLink(target, temp);
    } catch (FileAlreadyExistsException e) {
      throw new FileAlreadyExistsException(uri);
    } catch (UnsupportedOperationException | FileSystemException e) {
      if (LocalFiles.exists(target, LinkOption.NOFOLLOW_LINKS)) {
        throw new FileAlreadyExistsException(uri);
      }
      LocalFiles.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
      return;
    }
    LocalFiles.delete(temp);
  }

  @Override
  public UfsOutputStream create(String uri, boolean overwrite, int mode) throws IOException {
    Path target = toPath(uri);
    Path temp = tempFor(uri, target, overwrite);
    OutputStream out =
        LocalFiles.newOutputStream(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    return new UfsOutputStream() {
      private boolean closed;
      private String fingerprint = "";

      @Override
      public void write(int b) throws IOException {
        out.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
      }

      @Override
      public void close() throws IOException {
        if (closed) {
          return;
        }
        closed = true;
        try {
          out.close();
        } catch (IOException e) {
          LocalFiles.deleteIfExists(temp);
          throw e;
        }
        fingerprint = publish(temp, target, uri, overwrite, mode).fingerprint();
      }

      @Override
      public void abort() throws IOException {
        closed = true;
        try {
          out.close();
        } finally {
          LocalFiles.deleteIfExists(temp);
        }
      }

      @Override
      public String fingerprint() {
        return fingerprint;
      }
    };
  }

  /**
   * Fills a temporary file beside the target from each source in turn with {@link
   * FileChannel#transferTo}, which the kernel serves file to file (sendfile on JDK 17;
   * copy_file_range on later JDKs, which file systems that share blocks turn into a reflink): no
   * byte passes through this process. Then publishes it as {@code create} does. The sources are
   * left as they were.
   */
  @Override
  public UfsStatus concat(List<String> sources, String uri, boolean overwrite, int mode)
      throws IOException {
    StreamedConcat.checkSources(sources, uri);
    Path target = toPath(uri);
    List<Path> from = new ArrayList<>(sources.size());
    for (String source : sources) {
      from.add(toPath(source));
    }
    Path temp = tempFor(uri, target, overwrite);
    try (FileChannel out =
        LocalFiles.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      for (int i = 0; i < from.size(); i++) {
        appendFile(from.get(i), sources.get(i), out);
      }
    } catch (IOException | RuntimeException e) {
      LocalFiles.deleteIfExists(temp);
      throw e;
    }
    return publish(temp, target, uri, overwrite, mode);
  }

  /** Appends the whole of {@code source} at {@code out}'s position. */
  private static void appendFile(Path source, String uri, FileChannel out) throws IOException {
    try (FileChannel in = LocalFiles.open(source, StandardOpenOption.READ)) {
      long size = in.size();
      long done = 0;
      while (done < size) {
        // A call may move less than asked: the kernel moves at most about 2 GiB per call.
        long n = in.transferTo(done, size - done, out);
        if (n <= 0) {
          throw new IOException(
              "Concatenation of "
                  + uri
                  + " stopped at byte "
                  + done
                  + " of "
                  + size
                  + ": the file shrank while it was copied");
        }
        done += n;
      }
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(uri);
    }
  }

  private static Set<PosixFilePermission> fromMode(int mode) {
    Set<PosixFilePermission> perms = java.util.EnumSet.noneOf(PosixFilePermission.class);
    for (PosixFilePermission p : PosixFilePermission.values()) {
      if ((mode & (1 << (8 - p.ordinal()))) != 0) {
        perms.add(p);
      }
    }
    return perms;
  }

  @Override
  public void mkdirs(String uri, boolean recursive) throws IOException {
    Path p = toPath(uri);
    if (recursive) {
      LocalFiles.createDirectories(p);
    } else {
      if (LocalFiles.isDirectory(p)) {
        throw new FileAlreadyExistsException(uri);
      }
      try {
        LocalFiles.createDirectory(p);
      } catch (NoSuchFileException e) {
        throw new NoSuchFileException("file://" + p.getParent());
      }
    }
  }

  /**
   * Deletes the entry; a symbolic link is deleted, never what it leads to, and a recursive delete
   * does not descend into links to directories ({@link LocalFiles#deleteTree}).
   */
  @Override
  public void delete(String uri, boolean recursive) throws IOException {
    Path p = toPath(uri);
    if (!LocalFiles.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      throw new NoSuchFileException(uri);
    }
    if (recursive && LocalFiles.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
      LocalFiles.deleteTree(p);
    } else {
      LocalFiles.delete(p);
    }
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    Path from = toPath(src);
    Path to = toPath(dst);
    if (!LocalFiles.exists(from, LinkOption.NOFOLLOW_LINKS)) {
      throw new NoSuchFileException(src);
    }
    if (LocalFiles.exists(to, LinkOption.NOFOLLOW_LINKS)) {
      throw new FileAlreadyExistsException(dst);
    }
    LocalFiles.move(from, to, StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * With {@code replace}, one rename(2) (what an atomic move is), which replaces a non-directory or
   * an empty directory in one step: a reader sees the old entry or the new one, never nothing.
   */
  @Override
  public void rename(String src, String dst, boolean replace) throws IOException {
    if (!replace) {
      rename(src, dst);
      return;
    }
    Path from = toPath(src);
    Path to = toPath(dst);
    if (!LocalFiles.exists(from, LinkOption.NOFOLLOW_LINKS)) {
      throw new NoSuchFileException(src);
    }
    try {
      LocalFiles.move(from, to, StandardCopyOption.ATOMIC_MOVE);
    } catch (NoSuchFileException e) {
      throw LocalFiles.exists(from, LinkOption.NOFOLLOW_LINKS)
          ? missingParent(dst, to)
          : new NoSuchFileException(src);
    } catch (FileSystemException e) {
      throw replaceFailure(src, dst, from, to, e);
    }
  }

  /**
   * The failure of a rename that replaces, in the contract's terms: rename(2) reports a directory
   * that is not empty as ENOTEMPTY or EEXIST, and kinds that do not match as EISDIR or ENOTDIR,
   * which the JDK passes on as bare FileSystemExceptions.
   */
  private static IOException replaceFailure(
      String src, String dst, Path from, Path to, FileSystemException e) throws IOException {
    boolean fromDir = LocalFiles.isDirectory(from, LinkOption.NOFOLLOW_LINKS);
    boolean toDir = LocalFiles.isDirectory(to, LinkOption.NOFOLLOW_LINKS);
    IOException translated;
    if (fromDir && toDir && !isEmptyDirectory(to)) {
      translated = new DirectoryNotEmptyException(dst);
    } else if (toDir && !fromDir) {
      translated = new FileSystemException(src, dst, "only a directory can replace a directory");
    } else if (fromDir && !toDir && LocalFiles.exists(to, LinkOption.NOFOLLOW_LINKS)) {
      translated =
          new FileSystemException(
              src, dst, "a directory cannot replace something that is not a directory");
    } else {
      return e;
    }
    translated.initCause(e);
    return translated;
  }

  private static boolean isEmptyDirectory(Path dir) throws IOException {
    try (DirectoryStream<Path> children = LocalFiles.newDirectoryStream(dir)) {
      return !children.iterator().hasNext();
    }
  }

  /** The NoSuchFileException of a path whose parent directory is missing, naming the parent. */
  static NoSuchFileException missingParent(String uri, Path p) {
    return new NoSuchFileException(
        "file://" + p.getParent(), null, "the parent directory of " + uri + " does not exist");
  }

  /**
   * A symbolic link made with symlink(2). The JDK hands the target over as a path, which drops
   * repeated and trailing '/' from the text: nothing else, and never resolves it.
   */
  @Override
  public void createSymlink(String uri, String target) throws IOException {
    LocalLinks.createSymlink(uri, target);
  }

  /**
   * A node made with mknod(2), then given {@code mode} with chmod(2), because mknod narrows the
   * mode by the process umask. A node whose mode cannot be set is deleted again.
   *
   * @param rdev a device's number as a 64-bit {@code dev_t} (glibc's {@code makedev}), passed
   *     whole; Linux holds majors up to 4095 and minors up to 1048575 (32 bits) and refuses larger
   *     ones, which fail with a FileSystemException naming the limit
   */
  @Override
  public void createSpecialFile(String uri, UfsFileType type, int mode, long rdev)
      throws IOException {
    if (!type.special()) {
      throw new IllegalArgumentException(
          "Not a FIFO, socket or device node: " + type + " (for " + uri + ")");
    }
    Path p = toPath(uri);
    String parentUri = "file://" + p.getParent();
    try (LongPath lp = LongPath.open(p)) {
      Mknod.make(lp.path(), uri, parentUri, type, mode, rdev);
    } catch (NoSuchFileException e) {
      // A folder on the way to a long path is missing (mknod itself names the parent).
      throw new NoSuchFileException(
          parentUri, null, "the parent directory of " + uri + " does not exist");
    }
    try {
      // chmod(2), which follows links: the node was made just now, and is not one.
      LocalFiles.setAttribute(p, "unix:mode", mode & 07777);
    } catch (IOException | RuntimeException e) {
      LocalFiles.deleteIfExists(p);
      throw e;
    }
  }

  /** A second name made with link(2). */
  @Override
  public void createHardLink(String existingUri, String newUri) throws IOException {
    LocalLinks.createHardLink(existingUri, newUri);
  }

  /**
   * Links a hidden temporary name beside {@code linkUri} (listings leave it out) and renames it
   * over {@code linkUri} with one rename(2).
   */
  @Override
  public void relink(String existingUri, String linkUri) throws IOException {
    LocalLinks.relink(existingUri, linkUri);
  }

  /**
   * Whether the absolute path of {@code uri}, or of the temporary file a write fills beside it, is
   * longer than this store holds: past {@link LongPath#LONGEST} (64 KiB), a bound against runaway
   * paths far beyond any real tree. Paths past Linux's PATH_MAX (4096 bytes), which a mount can
   * reach relative to a deep working folder, are held, reached a piece at a time; only where that
   * cannot be done (not Linux, or no {@code /proc}) is PATH_MAX the limit.
   */
  @Override
  public boolean pathTooLong(String uri) {
    Path p = toPath(uri);
    return LongPath.tooLong(p) || LongPath.tooLong(tempBeside(p));
  }

  @Override
  public void close() {}
}
