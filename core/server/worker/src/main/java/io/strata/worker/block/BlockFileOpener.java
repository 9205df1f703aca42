package io.strata.worker.block;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens block files for writing, with Direct I/O (O_DIRECT) where the tier folder's file system
 * takes it, so that copying blocks in does not push the page cache out and stall the host.
 *
 * <p>Guarantees: when Direct I/O is turned off every file is written through the page cache.
 * Otherwise the first block file of each tier folder is opened with O_DIRECT; when that fails (a
 * file system that refuses O_DIRECT, or whose block size does not divide {@link
 * BlockFileWriter#ALIGNMENT}), the folder is remembered as refusing, one INFO line says so, and
 * that file and every later one in the folder are written through the page cache. Safe for use by
 * many copy threads at once.
 */
public final class BlockFileOpener {
  private static final Logger LOG = LoggerFactory.getLogger(BlockFileOpener.class);
  private static final OpenOption[] PLAIN = {
    StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE
  };
  private static final OpenOption[] DIRECT = {
    StandardOpenOption.CREATE,
    StandardOpenOption.TRUNCATE_EXISTING,
    StandardOpenOption.WRITE,
    ExtendedOpenOption.DIRECT
  };

  /** Opens a file with O_DIRECT; a seam so that tests can play a file system that refuses it. */
  interface DirectChannelOpener {
    FileChannel open(Path file) throws IOException;
  }

  private final boolean directEnabled;
  private final DirectChannelOpener directOpener;

  /** Tier folder -> whether it took O_DIRECT; absent until its first block file is opened. */
  private final ConcurrentHashMap<Path, Boolean> directByFolder = new ConcurrentHashMap<>();

  private final AtomicInteger refusalsLogged = new AtomicInteger();

  /**
   * @param directEnabled whether to try Direct I/O at all ({@code
   *     strata.worker.block.write.direct})
   */
  public BlockFileOpener(boolean directEnabled) {
    this(directEnabled, file -> FileChannel.open(file, DIRECT));
  }

  BlockFileOpener(boolean directEnabled, DirectChannelOpener directOpener) {
    this.directEnabled = directEnabled;
    this.directOpener = directOpener;
  }

  /** Opens the temporary file of a block being written, in its tier's folder, without fsync. */
  public BlockFileWriter open(TempBlock temp) throws IOException {
    return open(temp.path(), temp.tierAlias(), temp.tier().spec().dir(), false);
  }

  /**
   * Creates or truncates {@code file} and opens it for writing.
   *
   * @param tierAlias the tier's name, for the log line
   * @param folder the tier folder whose file system decides whether O_DIRECT is used
   * @param force whether {@link BlockFileWriter#close} forces the file to the device
   */
  public BlockFileWriter open(Path file, String tierAlias, Path folder, boolean force)
      throws IOException {
    Boolean known = directByFolder.get(folder);
    if (!directEnabled || Boolean.FALSE.equals(known)) {
      return new BlockFileWriter(file, FileChannel.open(file, PLAIN), false, force);
    }
    String why;
    try {
      why = Boolean.TRUE.equals(known) ? null : blockSizeProblem(file);
      if (why == null) {
        FileChannel channel = directOpener.open(file);
        directByFolder.putIfAbsent(folder, Boolean.TRUE);
        return new BlockFileWriter(file, channel, true, force);
      }
    } catch (IOException | UnsupportedOperationException e) {
      // EINVAL from open(2) on a file system without O_DIRECT, or something worse: the plain
      // open below tells the two apart, and only a folder it can write is marked as refusing.
      why = e.toString();
    }
    FileChannel plain = FileChannel.open(file, PLAIN);
    if (!Boolean.FALSE.equals(directByFolder.put(folder, Boolean.FALSE))) {
      refusalsLogged.incrementAndGet();
      LOG.info(
          "tier {} folder {} refuses O_DIRECT ({}); writing blocks through the page cache",
          tierAlias,
          folder,
          why);
    }
    return new BlockFileWriter(file, plain, false, force);
  }

  /** Why the file system of {@code file} cannot take our alignment, or null when it can. */
  private static String blockSizeProblem(Path file) throws IOException {
    long blockSize = Files.getFileStore(file.getParent()).getBlockSize();
    if (blockSize <= 0 || BlockFileWriter.ALIGNMENT % blockSize != 0) {
      return "its block size " + blockSize + " does not divide " + BlockFileWriter.ALIGNMENT;
    }
    return null;
  }

  /** Whether Direct I/O is tried at all. */
  public boolean directEnabled() {
    return directEnabled;
  }

  /** True once a block file in {@code folder} could not be opened with O_DIRECT. */
  public boolean refusesDirect(Path folder) {
    return Boolean.FALSE.equals(directByFolder.get(folder));
  }

  /** How many "refuses O_DIRECT" lines were logged: at most one per tier folder. */
  public int refusalsLogged() {
    return refusalsLogged.get();
  }
}
