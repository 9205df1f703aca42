package io.strata.underfs.local;

import io.strata.underfs.StreamedConcat;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * An under store on a local (or NFS-mounted) folder, addressed as {@code file:///abs/path}.
 * Writes go to a hidden temporary file beside the target and are moved into place atomically on
 * close, so a reader never sees a half-written file under its final name; concatenations too,
 * copied file to file by the kernel.
 */
public final class LocalUnderFileSystem implements UnderFileSystem {
  /** Marker in the names of in-progress writes; such files are hidden from listings. */
  static final String TEMP_MARKER = ".strata-tmp-";

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

  @Override
  public UfsStatus getStatus(String uri) throws IOException {
    Path p = toPath(uri);
    PosixFileAttributes attrs;
    try {
      attrs = Files.readAttributes(p, PosixFileAttributes.class);
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(uri);
    }
    return toStatus(p.getFileName() == null ? "" : p.getFileName().toString(), attrs);
  }

  /**
   * A stat and nothing more: a whole status also names the owner and group, which looks them
   * up in the user and group databases at every call, and readers check fingerprints at every
   * uncached read.
   */
  @Override
  public String fingerprint(String uri) throws IOException {
    try {
      return fingerprint(Files.readAttributes(toPath(uri), BasicFileAttributes.class));
    } catch (NoSuchFileException e) {
      throw new NoSuchFileException(uri);
    }
  }

  private static String fingerprint(BasicFileAttributes a) {
    return a.isDirectory() ? "" : a.size() + ":" + a.lastModifiedTime().toMillis();
  }

  private static UfsStatus toStatus(String name, PosixFileAttributes a) {
    long length = a.isDirectory() ? 0 : a.size();
    long mtime = a.lastModifiedTime().toMillis();
    return new UfsStatus(name, a.isDirectory(), length, mtime, toMode(a.permissions()),
        a.owner().getName(), a.group().getName(), fingerprint(a));
  }

  private static int toMode(Set<PosixFilePermission> perms) {
    int mode = 0;
    for (PosixFilePermission p : perms) {
      mode |= 1 << (8 - p.ordinal());
    }
    return mode;
  }

  @Override
  public boolean exists(String uri) {
    return Files.exists(toPath(uri), LinkOption.NOFOLLOW_LINKS) || Files.exists(toPath(uri));
  }

  @Override
  public CloseableIterator<UfsStatus> list(String uri) throws IOException {
    Path dir = toPath(uri);
    if (!Files.isDirectory(dir)) {
      if (!Files.exists(dir)) {
        throw new NoSuchFileException(uri);
      }
      throw new IOException("Not a directory in the under store: " + uri);
    }
    DirectoryStream<Path> stream = Files.newDirectoryStream(dir);
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
            next = toStatus(name, Files.readAttributes(p, PosixFileAttributes.class));
          } catch (IOException e) {
            // Deleted between listing and stat, or a dangling link: not part of the listing.
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
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
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
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
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
   * The hidden temporary file beside {@code uri}'s target that a write fills before
   * {@link #publish} moves it into place; checks first that the target may be written.
   */
  private static Path tempFor(String uri, Path target, boolean overwrite) throws IOException {
    if (!overwrite && Files.exists(target)) {
      throw new FileAlreadyExistsException(uri);
    }
    Path parent = target.getParent();
    if (parent == null || !Files.isDirectory(parent)) {
      throw new NoSuchFileException(parent == null ? uri : "file://" + parent);
    }
    return parent.resolve("." + target.getFileName() + TEMP_MARKER + UUID.randomUUID());
  }

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
        Files.setPosixFilePermissions(temp, fromMode(mode));
      }
      if (overwrite) {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE,
            StandardCopyOption.REPLACE_EXISTING);
      } else {
        // link-then-unlink would refuse an existing target atomically; a move after the
        // check above is enough for a cache whose writers go through one master.
        if (Files.exists(target)) {
          throw new FileAlreadyExistsException(uri);
        }
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
      }
      return getStatus(uri);
    } catch (IOException e) {
      Files.deleteIfExists(temp);
      throw e;
    }
  }

  @Override
  public UfsOutputStream create(String uri, boolean overwrite, int mode) throws IOException {
    Path target = toPath(uri);
    Path temp = tempFor(uri, target, overwrite);
    OutputStream out = Files.newOutputStream(temp, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE);
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
          Files.deleteIfExists(temp);
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
          Files.deleteIfExists(temp);
        }
      }

      @Override
      public String fingerprint() {
        return fingerprint;
      }
    };
  }

  /**
   * Fills a temporary file beside the target from each source in turn with
   * {@link FileChannel#transferTo}, which the kernel serves file to file (sendfile on JDK 17;
   * copy_file_range on later JDKs, which file systems that share blocks turn into a reflink):
   * no byte passes through this process. Then publishes it as {@code create} does. The sources
   * are left as they were.
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
    try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      for (int i = 0; i < from.size(); i++) {
        appendFile(from.get(i), sources.get(i), out);
      }
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(temp);
      throw e;
    }
    return publish(temp, target, uri, overwrite, mode);
  }

  /** Appends the whole of {@code source} at {@code out}'s position. */
  private static void appendFile(Path source, String uri, FileChannel out) throws IOException {
    try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ)) {
      long size = in.size();
      long done = 0;
      while (done < size) {
        // A call may move less than asked: the kernel moves at most about 2 GiB per call.
        long n = in.transferTo(done, size - done, out);
        if (n <= 0) {
          throw new IOException("Concatenation of " + uri + " stopped at byte " + done
              + " of " + size + ": the file shrank while it was copied");
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
      Files.createDirectories(p);
    } else {
      if (Files.isDirectory(p)) {
        throw new FileAlreadyExistsException(uri);
      }
      try {
        Files.createDirectory(p);
      } catch (NoSuchFileException e) {
        throw new NoSuchFileException("file://" + p.getParent());
      }
    }
  }

  @Override
  public void delete(String uri, boolean recursive) throws IOException {
    Path p = toPath(uri);
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      throw new NoSuchFileException(uri);
    }
    if (recursive && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
      try (Stream<Path> walk = Files.walk(p)) {
        for (Path q : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
          Files.deleteIfExists(q);
        }
      }
    } else {
      Files.delete(p);
    }
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    Path from = toPath(src);
    Path to = toPath(dst);
    if (!Files.exists(from, LinkOption.NOFOLLOW_LINKS)) {
      throw new NoSuchFileException(src);
    }
    if (Files.exists(to, LinkOption.NOFOLLOW_LINKS)) {
      throw new FileAlreadyExistsException(dst);
    }
    Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
  }

  @Override
  public void close() {}
}
