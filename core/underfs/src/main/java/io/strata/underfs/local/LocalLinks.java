package io.strata.underfs.local;

import static io.strata.underfs.local.LocalUnderFileSystem.missingParent;
import static io.strata.underfs.local.LocalUnderFileSystem.tempBeside;
import static io.strata.underfs.local.LocalUnderFileSystem.toPath;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The symbolic and hard links of {@link LocalUnderFileSystem}, made with symlink(2), link(2) and
 * rename(2), failing in the terms of the {@link io.strata.underfs.UnderFileSystem} contract (the
 * JDK names the wrong file in some of them, and reports others as bare FileSystemExceptions).
 */
final class LocalLinks {
  private LocalLinks() {}

  /** See {@link LocalUnderFileSystem#createSymlink}. */
  static void createSymlink(String uri, String target) throws IOException {
    if (target.isEmpty()) {
      throw new IllegalArgumentException("A symbolic link needs a target: " + uri);
    }
    Path link = toPath(uri);
    try {
      LocalFiles.createSymbolicLink(link, Path.of(target));
    } catch (FileAlreadyExistsException e) {
      throw new FileAlreadyExistsException(uri);
    } catch (NoSuchFileException e) {
      throw missingParent(uri, link);
    }
  }

  /** See {@link LocalUnderFileSystem#createHardLink}. */
  static void createHardLink(String existingUri, String newUri) throws IOException {
    link(toPath(existingUri), toPath(newUri), existingUri, newUri, toPath(newUri));
  }

  /** See {@link LocalUnderFileSystem#relink}. */
  static void relink(String existingUri, String linkUri) throws IOException {
    Path existing = toPath(existingUri);
    Path link = toPath(linkUri);
    Path temp = tempBeside(link);
    link(existing, temp, existingUri, linkUri, link);
    try {
      LocalFiles.move(temp, link, StandardCopyOption.ATOMIC_MOVE);
    } catch (FileSystemException e) {
      if (LocalFiles.isDirectory(link, LinkOption.NOFOLLOW_LINKS)) {
        FileSystemException isDirectory =
            new FileSystemException(
                existingUri,
                linkUri,
                "a directory is there; only a non-directory can be replaced by a file's name");
        isDirectory.initCause(e);
        throw isDirectory;
      }
      throw e;
    } finally {
      // Also after success: rename(2) does nothing, and leaves the temporary name, when both
      // names already were names of one file.
      LocalFiles.deleteIfExists(temp);
    }
  }

  /**
   * Makes {@code newName} a name of {@code existing} with link(2), in the contract's terms.
   *
   * @param newUri the URI named when the new name exists or its parent is missing
   * @param newPath the path of {@code newUri} (whose parent is {@code newName}'s)
   */
  private static void link(
      Path existing, Path newName, String existingUri, String newUri, Path newPath)
      throws IOException {
    try {
      LocalFiles.createLink(newName, existing);
    } catch (FileAlreadyExistsException e) {
      throw new FileAlreadyExistsException(newUri);
    } catch (NoSuchFileException e) {
      throw LocalFiles.exists(existing, LinkOption.NOFOLLOW_LINKS)
          ? missingParent(newUri, newPath)
          : new NoSuchFileException(existingUri);
    } catch (FileSystemException e) {
      if (LocalFiles.isDirectory(existing, LinkOption.NOFOLLOW_LINKS)) {
        FileSystemException directory =
            new FileSystemException(existingUri, newUri, "a directory cannot have a second name");
        directory.initCause(e);
        throw directory;
      }
      throw e;
    }
  }
}
