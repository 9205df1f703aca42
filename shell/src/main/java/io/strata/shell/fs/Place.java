package io.strata.shell.fs;

import io.strata.client.CloseableIterator;
import io.strata.client.CreateOptions;
import io.strata.client.FileSystem;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.shell.UsageException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A file or directory that {@code strata fs cp} copies from or to: either a Strata path or, when
 * written {@code local:/abs/path} or {@code file:///abs/path}, a path of this machine.
 */
abstract class Place {
  static final String LOCAL_PREFIX = "local:";

  /** Parses a cp argument. */
  static Place parse(String arg, FileSystem fs) throws StrataException {
    if (arg.startsWith(LOCAL_PREFIX)) {
      return new Local(Path.of(arg.substring(LOCAL_PREFIX.length())).toAbsolutePath());
    }
    if (arg.startsWith("file:")) {
      // Taken verbatim, not as a java.net.URI: local names may hold spaces, '#' or '%'.
      if (!arg.startsWith("file:///")) {
        throw new UsageException("Not a local file URI: " + arg + " (write file:///abs/path)");
      }
      return new Local(Path.of(arg.substring("file://".length())));
    }
    return new Strata(fs, PathNames.normalize(arg));
  }

  abstract String display();

  abstract String name();

  abstract boolean exists() throws IOException;

  abstract boolean isDirectory() throws IOException;

  abstract Place child(String name);

  /** The names of a directory's children. */
  abstract List<String> childNames() throws IOException;

  abstract InputStream open() throws IOException;

  /** Starts writing a new file; nothing is left behind if {@link Sink#discard} is called. */
  abstract Sink create(boolean overwrite) throws IOException;

  abstract void mkdir() throws IOException;

  /** True when this place is {@code other} or lies inside it. */
  abstract boolean isInside(Place other);

  /** An output that is either committed by close() or discarded. */
  interface Sink {
    OutputStream stream();

    void discard();
  }

  /** A path of this machine. */
  static final class Local extends Place {
    private final Path path;

    Local(Path path) {
      this.path = path.normalize();
    }

    @Override
    String display() {
      return "local:" + path;
    }

    @Override
    String name() {
      return path.getFileName() == null ? "" : path.getFileName().toString();
    }

    @Override
    boolean exists() {
      return Files.exists(path);
    }

    @Override
    boolean isDirectory() {
      return Files.isDirectory(path);
    }

    @Override
    Place child(String name) {
      return new Local(path.resolve(name));
    }

    @Override
    List<String> childNames() throws IOException {
      try (Stream<Path> s = Files.list(path)) {
        return s.map(p -> p.getFileName().toString()).sorted().toList();
      }
    }

    @Override
    InputStream open() throws IOException {
      try {
        return Files.newInputStream(path);
      } catch (NoSuchFileException e) {
        throw StrataException.notFound(display());
      }
    }

    @Override
    Sink create(boolean overwrite) throws IOException {
      OutputStream out;
      try {
        out =
            overwrite
                ? Files.newOutputStream(path)
                : Files.newOutputStream(
                    path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      } catch (FileAlreadyExistsException e) {
        throw new StrataException(
            ErrorCode.ALREADY_EXISTS,
            "Path already exists: " + display() + " (use cp -f to overwrite)");
      }
      return new Sink() {
        @Override
        public OutputStream stream() {
          return out;
        }

        @Override
        public void discard() {
          try {
            out.close();
            Files.deleteIfExists(path);
          } catch (IOException ignored) {
            // Best effort: the copy already failed and that error is the one reported.
          }
        }
      };
    }

    @Override
    void mkdir() throws IOException {
      Files.createDirectories(path);
    }

    @Override
    boolean isInside(Place other) {
      return other instanceof Local && path.startsWith(((Local) other).path);
    }
  }

  /** A Strata path. */
  static final class Strata extends Place {
    private final FileSystem fs;
    private final String path;

    Strata(FileSystem fs, String path) {
      this.fs = fs;
      this.path = path;
    }

    @Override
    String display() {
      return path;
    }

    @Override
    String name() {
      return PathNames.name(path);
    }

    @Override
    boolean exists() throws StrataException {
      return fs.exists(path);
    }

    @Override
    boolean isDirectory() throws StrataException {
      return fs.getStatus(path).getDirectory();
    }

    @Override
    Place child(String name) {
      return new Strata(fs, PathNames.join(path, name));
    }

    @Override
    List<String> childNames() throws StrataException {
      // Names only: a large directory costs a list of strings, not of statuses.
      List<String> names = new ArrayList<>();
      try (CloseableIterator<FileInfo> it = fs.listStatus(path)) {
        while (it.hasNext()) {
          names.add(it.next().getName());
        }
      }
      return names;
    }

    @Override
    InputStream open() throws StrataException {
      return fs.openFile(path);
    }

    @Override
    Sink create(boolean overwrite) throws StrataException {
      var out = fs.createFile(path, CreateOptions.defaults().overwrite(overwrite));
      return new Sink() {
        @Override
        public OutputStream stream() {
          return out;
        }

        @Override
        public void discard() {
          out.cancel();
        }
      };
    }

    @Override
    void mkdir() throws StrataException {
      fs.createDirectory(path, false, true);
    }

    @Override
    boolean isInside(Place other) {
      return other instanceof Strata && PathNames.isUnder(path, ((Strata) other).path);
    }
  }
}
