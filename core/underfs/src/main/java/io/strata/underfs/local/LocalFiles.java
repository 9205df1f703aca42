package io.strata.underfs.local;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.CopyOption;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * The calls of {@link Files} that {@link LocalUnderFileSystem} makes, for paths of any length: each
 * resolves its paths through a {@link LongPath} for the one call, closes it, and fails as {@link
 * Files} fails, naming the paths it was given. A path shorter than {@link LongPath#THRESHOLD} bytes
 * goes to {@link Files} as it is.
 *
 * <p>Also what {@link Files} cannot do at such depths: {@link #createDirectories} and {@link
 * #deleteTree} take each folder in turn, where Files.createDirectories and Files.walk build paths
 * from a whole one.
 */
final class LocalFiles {
  private LocalFiles() {}

  /** A call on one resolved path. */
  @FunctionalInterface
  interface PathCall<T> {
    T apply(Path p) throws IOException;
  }

  /** A call on two resolved paths. */
  @FunctionalInterface
  interface TwoPathCall<T> {
    T apply(Path a, Path b) throws IOException;
  }

  /** {@code call} on {@code p} resolved, failing with exceptions that name {@code p}. */
  static <T> T on(Path p, PathCall<T> call) throws IOException {
    try (LongPath lp = LongPath.open(p)) {
      try {
        return call.apply(lp.path());
      } catch (FileSystemException e) {
        throw lp.named(e);
      }
    }
  }

  /** {@code call} on {@code a} and {@code b} resolved, failing naming them. */
  static <T> T on(Path a, Path b, TwoPathCall<T> call) throws IOException {
    try (LongPath la = LongPath.open(a);
        LongPath lb = LongPath.open(b)) {
      try {
        return call.apply(la.path(), lb.path());
      } catch (FileSystemException e) {
        throw lb.named(la.named(e));
      }
    }
  }

  static <A extends BasicFileAttributes> A readAttributes(
      Path p, Class<A> type, LinkOption... options) throws IOException {
    return on(p, q -> Files.readAttributes(q, type, options));
  }

  static Map<String, Object> readAttributes(Path p, String attributes, LinkOption... options)
      throws IOException {
    return on(p, q -> Files.readAttributes(q, attributes, options));
  }

  static Path readSymbolicLink(Path p) throws IOException {
    return on(p, Files::readSymbolicLink);
  }

  /** As {@link Files#exists}: false when the path cannot be reached. */
  static boolean exists(Path p, LinkOption... options) {
    try {
      return on(p, q -> Files.exists(q, options));
    } catch (IOException e) {
      return false;
    }
  }

  /** As {@link Files#isDirectory}: false when the path cannot be reached. */
  static boolean isDirectory(Path p, LinkOption... options) {
    try {
      return on(p, q -> Files.isDirectory(q, options));
    } catch (IOException e) {
      return false;
    }
  }

  static FileChannel open(Path p, OpenOption... options) throws IOException {
    return on(p, q -> FileChannel.open(q, options));
  }

  static OutputStream newOutputStream(Path p, OpenOption... options) throws IOException {
    return on(p, q -> Files.newOutputStream(q, options));
  }

  static void setPosixFilePermissions(Path p, Set<PosixFilePermission> permissions)
      throws IOException {
    on(p, q -> Files.setPosixFilePermissions(q, permissions));
  }

  static void setAttribute(Path p, String attribute, Object value) throws IOException {
    on(p, q -> Files.setAttribute(q, attribute, value));
  }

  static void move(Path from, Path to, CopyOption... options) throws IOException {
    on(from, to, (a, b) -> Files.move(a, b, options));
  }

  static void createLink(Path link, Path existing) throws IOException {
    on(link, existing, Files::createLink);
  }

  /** A symbolic link at {@code link}; {@code target} is its text, never resolved. */
  static void createSymbolicLink(Path link, Path target) throws IOException {
    on(link, q -> Files.createSymbolicLink(q, target));
  }

  static void createDirectory(Path p) throws IOException {
    on(p, Files::createDirectory);
  }

  static void delete(Path p) throws IOException {
    on(
        p,
        q -> {
          Files.delete(q);
          return null;
        });
  }

  static boolean deleteIfExists(Path p) throws IOException {
    try {
      return on(p, Files::deleteIfExists);
    } catch (NoSuchFileException e) {
      // A folder on the way is gone, and so is the entry.
      return false;
    }
  }

  /**
   * The entries of folder {@code dir}, named below {@code dir} as given. The stream keeps a
   * descriptor of its own, so the folder is resolved only to open it.
   */
  // The open stream is this method's result: the caller closes it (through the wrapper, if any).
  @SuppressWarnings("StreamResourceLeak")
  static DirectoryStream<Path> newDirectoryStream(Path dir) throws IOException {
    LongPath resolved;
    DirectoryStream<Path> stream;
    try (LongPath lp = LongPath.open(dir)) {
      resolved = lp;
      try {
        stream = Files.newDirectoryStream(lp.path());
      } catch (FileSystemException e) {
        throw lp.named(e);
      }
    }
    if (resolved.path() == dir) {
      return stream;
    }
    return new DirectoryStream<>() {
      @Override
      public Iterator<Path> iterator() {
        Iterator<Path> entries = stream.iterator();
        return new Iterator<>() {
          @Override
          public boolean hasNext() {
            try {
              return entries.hasNext();
            } catch (DirectoryIteratorException e) {
              throw new DirectoryIteratorException(resolved.named(e.getCause()));
            }
          }

          @Override
          public Path next() {
            try {
              return dir.resolve(entries.next().getFileName());
            } catch (DirectoryIteratorException e) {
              throw new DirectoryIteratorException(resolved.named(e.getCause()));
            }
          }
        };
      }

      @Override
      public void close() throws IOException {
        stream.close();
      }
    };
  }

  /**
   * As {@link Files#createDirectories}: makes each missing folder down to {@code dir}, and fails
   * with FileAlreadyExistsException naming {@code dir} when it is there but not a folder (a link to
   * a folder counts as not one, as there).
   */
  static void createDirectories(Path dir) throws IOException {
    try {
      createAndCheckIsDirectory(dir);
      return;
    } catch (FileAlreadyExistsException e) {
      throw e;
    } catch (IOException e) {
      // A parent is missing, or something else: found out below.
    }
    dir = dir.toAbsolutePath();
    Deque<Path> missing = new ArrayDeque<>();
    Path parent = dir.getParent();
    while (parent != null && !exists(parent)) {
      missing.push(parent);
      parent = parent.getParent();
    }
    if (parent == null) {
      throw new FileSystemException(
          dir.toString(), null, "Unable to determine if root directory exists");
    }
    while (!missing.isEmpty()) {
      createAndCheckIsDirectory(missing.pop());
    }
    createAndCheckIsDirectory(dir);
  }

  private static void createAndCheckIsDirectory(Path dir) throws IOException {
    try {
      createDirectory(dir);
    } catch (FileAlreadyExistsException e) {
      if (!isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
        throw e;
      }
    }
  }

  /**
   * Deletes folder {@code top} and everything below it, never following a symbolic link: a link is
   * deleted, not what it leads to. Depth first, with a stack of its own rather than the call stack
   * (a tree may be thousands of folders deep), holding one directory stream at a time; entries
   * already gone are passed over.
   */
  static void deleteTree(Path top) throws IOException {
    record Step(Path dir, boolean emptied) {}
    Deque<Step> steps = new ArrayDeque<>();
    steps.push(new Step(top, false));
    while (!steps.isEmpty()) {
      Step step = steps.pop();
      if (step.emptied()) {
        deleteIfExists(step.dir());
        continue;
      }
      steps.push(new Step(step.dir(), true));
      try (DirectoryStream<Path> children = newDirectoryStream(step.dir())) {
        for (Path child : children) {
          if (isDirectory(child, LinkOption.NOFOLLOW_LINKS)) {
            steps.push(new Step(child, false));
          } else {
            deleteIfExists(child);
          }
        }
      } catch (NoSuchFileException e) {
        // Deleted meanwhile.
      } catch (DirectoryIteratorException e) {
        throw e.getCause();
      }
    }
  }
}
