package io.strata.common;

import java.nio.file.Path;

/**
 * Where a worker keeps block files inside a tier folder: committed blocks are {@code
 * <tier>/blocks/<blockId>}, blocks being written live in {@code <tier>/tmp/} until they are
 * complete and renamed into place, and each committed block's checksums are {@code
 * <tier>/checksums/<blockId>}. A client on the worker's machine that knows the tier folders (each
 * worker reports them) reads a committed block by opening that name, without asking the worker: a
 * file under that name is always a whole block, and a block id is never reused for other content.
 */
public final class BlockFiles {
  private static final String COMMITTED = "blocks";
  private static final String TEMPORARY = "tmp";
  private static final String CHECKSUMS = "checksums";

  private BlockFiles() {}

  /** The folder of a tier's committed blocks. */
  public static Path committedDir(Path tierDir) {
    return tierDir.resolve(COMMITTED);
  }

  /** The folder of a tier's blocks being written. */
  public static Path temporaryDir(Path tierDir) {
    return tierDir.resolve(TEMPORARY);
  }

  /**
   * The folder of the checksums of a tier's committed blocks. A folder of its own, not beside the
   * blocks in {@code blocks/}: a worker of a release before checksums removes any file there whose
   * name is not a block id.
   */
  public static Path checksumsDir(Path tierDir) {
    return tierDir.resolve(CHECKSUMS);
  }

  /** The checksums of a committed block in a tier ({@link BlockChecksums}). */
  public static Path checksums(Path tierDir, long blockId) {
    return checksumsDir(tierDir).resolve(Long.toString(blockId));
  }

  /** The file of a committed block in a tier. */
  public static Path committed(Path tierDir, long blockId) {
    return committedDir(tierDir).resolve(Long.toString(blockId));
  }
}
