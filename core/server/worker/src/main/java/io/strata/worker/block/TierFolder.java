package io.strata.worker.block;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file work of a {@link TieredBlockStore} on one tier folder that needs none of its state:
 * preparing and scanning the folder at start-up, and writing and deleting the markers of held
 * blocks. Those methods do I/O, so none may run under the store's lock.
 */
final class TierFolder {
  private static final Logger LOG = LoggerFactory.getLogger(TierFolder.class);

  /** A block file found at start-up. */
  record Found(long blockId, long length, long mtime, Path path) {}

  private TierFolder() {}

  /** The configuration key of a tier's capacity, for messages. */
  static String capacityKey(StoreTier tier) {
    return "strata.worker.tier." + tier.spec().alias().toLowerCase(Locale.ROOT) + ".capacity";
  }

  /** Lists a tier's held markers into {@code ids}; returns the stray files removed. */
  static int listHeld(StoreTier tier, List<Long> ids) throws StrataException {
    int stray = 0;
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(tier.heldDir())) {
      for (Path p : dir) {
        Long id = parseBlockId(p.getFileName().toString());
        if (id == null) {
          LOG.warn("Removing {} from tier {}: its name is not a block id", p, tier.spec().alias());
          deleteRecursively(p);
          stray++;
        } else {
          ids.add(id);
        }
      }
    } catch (IOException e) {
      throw unreadable(tier, "list", tier.heldDir(), e);
    }
    return stray;
  }

  /**
   * Deletes the checksum files of the tier whose block is not in the tier (the block went while the
   * worker was down, or a crash came between writing them and renaming the block in) and those left
   * half-written.
   *
   * @return how many it deleted
   */
  static int clearStaleChecksums(StoreTier tier, java.util.Set<Long> blocksOfTier)
      throws StrataException {
    int removed = 0;
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(tier.checksumsDir())) {
      for (Path p : dir) {
        Long id = parseBlockId(p.getFileName().toString());
        if (id == null || !blocksOfTier.contains(id)) {
          deleteRecursively(p);
          removed++;
        }
      }
    } catch (IOException e) {
      throw unreadable(tier, "list", tier.checksumsDir(), e);
    }
    return removed;
  }

  /** The error of a tier folder the worker cannot list or clear at start-up, with its remedy. */
  private static StrataException unreadable(
      StoreTier tier, String action, Path dir, IOException e) {
    return new StrataException(
        ErrorCode.FAILED_PRECONDITION,
        "Cannot "
            + action
            + " "
            + dir
            + " of tier "
            + tier.spec().alias()
            + " ("
            + tier.spec().dirKey()
            + "): "
            + e
            + ". Check that the folder is readable and writable by this user and its disk is"
            + " mounted, or point "
            + tier.spec().dirKey()
            + " at another folder.",
        e);
  }

  /** Creates the tier's folders and checks that it can write there. */
  static void prepare(StoreTier tier) throws StrataException {
    TierSpec spec = tier.spec();
    try {
      Files.createDirectories(tier.blocksDir());
      Files.createDirectories(tier.tmpDir());
      Files.createDirectories(tier.heldDir());
      Files.createDirectories(tier.checksumsDir());
      Path probe = tier.tmpDir().resolve(".write-probe");
      Files.write(probe, new byte[] {1});
      Files.delete(probe);
    } catch (IOException | SecurityException e) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          "Cannot use folder "
              + spec.dir()
              + " of tier "
              + spec.alias()
              + " ("
              + spec.dirKey()
              + "): "
              + e
              + ". Make it writable by this user, or point "
              + spec.dirKey()
              + " at a writable folder.",
          e);
    }
  }

  /** Deletes everything in the tier's {@code tmp/}; returns how many entries it deleted. */
  static int clearTemp(StoreTier tier) throws StrataException {
    int removed = 0;
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(tier.tmpDir())) {
      for (Path p : dir) {
        deleteRecursively(p);
        removed++;
      }
    } catch (IOException e) {
      throw unreadable(tier, "clear", tier.tmpDir(), e);
    }
    return removed;
  }

  static void deleteRecursively(Path p) throws IOException {
    if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
      try (Stream<Path> walk = Files.walk(p)) {
        for (Path q : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
          Files.deleteIfExists(q);
        }
      }
    } else {
      Files.deleteIfExists(p);
    }
  }

  /**
   * Lists a tier's blocks folder into {@code found}, leaving out blocks already in {@code known} (a
   * faster tier); returns the stray files removed.
   */
  static int listBlocks(StoreTier tier, Map<Long, BlockMeta> known, List<Found> found)
      throws StrataException {
    int stray = 0;
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(tier.blocksDir())) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        Long id = parseBlockId(name);
        BasicFileAttributes attrs;
        try {
          attrs = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
          continue;
        }
        if (id == null || !attrs.isRegularFile()) {
          LOG.warn("Removing {} from tier {}: its name is not a block id", p, tier.spec().alias());
          deleteRecursively(p);
          stray++;
        } else if (known.containsKey(id)) {
          // Also in a faster tier (copied there before a crash): keep the faster copy.
          LOG.warn("Removing {}: block {} is also in tier {}", p, id, known.get(id).tierAlias());
          Files.deleteIfExists(p);
          stray++;
        } else {
          found.add(new Found(id, attrs.size(), attrs.lastModifiedTime().toMillis(), p));
        }
      }
    } catch (IOException e) {
      throw unreadable(tier, "list", tier.blocksDir(), e);
    }
    return stray;
  }

  /** The block id a file is named by, or null when the name is not a canonical block id. */
  static Long parseBlockId(String name) {
    if (name.isEmpty() || name.length() > 19) {
      return null;
    }
    for (int i = 0; i < name.length(); i++) {
      if (!Character.isDigit(name.charAt(i))) {
        return null;
      }
    }
    try {
      long id = Long.parseLong(name);
      // Only the canonical spelling, so that one block never has two files.
      return Long.toString(id).equals(name) ? id : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * Creates a held marker. Not forced to the device, like the block's rename in commit: a power cut
   * can lose a marker written since the file system last synced, and the block is then found unheld
   * (evictable before it is persisted) or not at all; a crash of the process alone loses nothing.
   */
  static void writeMarker(Path marker) throws IOException {
    Files.write(marker, new byte[0]);
  }

  /** Deletes a held marker; a failure is logged, and open() deletes the marker later. */
  static void deleteMarker(StoreTier tier, long blockId) {
    try {
      Files.deleteIfExists(tier.heldMarker(blockId));
    } catch (IOException e) {
      LOG.warn(
          "Cannot delete the held marker of block {} in tier {}: {}; it is deleted when the "
              + "worker next starts",
          blockId,
          tier.spec().alias(),
          e.toString());
    }
  }
}
