package io.strata.underfs.hdfs;

import io.strata.underfs.StreamedConcat;
import io.strata.underfs.UfsStatus;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.ipc.RemoteException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A concatenation done by the namenode: HDFS concat moves the sources' blocks onto the end of a
 * target file in one namenode operation and deletes the sources, so no byte is read or written,
 * whatever the size.
 *
 * <p>The namenode joins only under its rules (Hadoop 3's FSDirConcatOp): the sources and the target
 * in one directory; the target an existing, closed file; each source closed, not empty, not in a
 * snapshot, with a preferred block size no larger than the target's and the target's erasure-coding
 * policy (Hadoop 2 also wanted every block but the last full). So the non-empty sources are first
 * renamed beside the target under hidden temporary names; the others are concatenated onto the
 * first, which then gets the mode a write would give it and is renamed onto the target, as {@link
 * HdfsOutputStream} publishes a write. Empty sources add nothing and are left where they are.
 *
 * <p>When the namenode refuses the concat, the sources are renamed back and the bytes copied
 * through this process instead ({@link StreamedConcat}). Once the concat is done the sources are
 * gone: a failure of the last rename deletes the joined file, and the sources with it.
 */
final class HdfsConcat {
  private static final Logger LOG = LoggerFactory.getLogger(HdfsConcat.class);

  /** What the namenode throws when its rules refuse a concat, rather than failing it. */
  private static final Set<String> REFUSALS =
      Set.of(
          "org.apache.hadoop.HadoopIllegalArgumentException",
          "java.lang.IllegalArgumentException",
          "java.lang.UnsupportedOperationException",
          "org.apache.hadoop.hdfs.protocol.SnapshotException");

  private final HdfsUnderFileSystem store;
  private final DistributedFileSystem fs;
  private final HdfsErrors errors;
  private final Configuration conf;

  HdfsConcat(
      HdfsUnderFileSystem store, DistributedFileSystem fs, HdfsErrors errors, Configuration conf) {
    this.store = store;
    this.fs = fs;
    this.errors = errors;
    this.conf = conf;
  }

  UfsStatus concat(List<String> sources, String target, boolean overwrite, int mode)
      throws IOException {
    StreamedConcat.checkSources(sources, target);
    Path to = store.toPath(target);
    if (to.isRoot()) {
      throw new IllegalArgumentException("Cannot write the root of " + target + " as a file");
    }
    List<Path> joined = new ArrayList<>();
    try {
      FileStatus existing = statusOrNull(to);
      if (existing != null && (!overwrite || existing.isDirectory())) {
        throw new FileAlreadyExistsException(
            target, null, existing.isDirectory() ? "a directory is there" : null);
      }
      FileStatus parent = statusOrNull(to.getParent());
      if (parent == null || !parent.isDirectory()) {
        throw new NoSuchFileException(
            store.parentUri(target), null, "the parent directory of " + target + " does not exist");
      }
      for (String source : sources) {
        FileStatus s = statusOrNull(store.toPath(source));
        if (s == null) {
          throw new NoSuchFileException(source);
        }
        if (s.isDirectory()) {
          throw new IOException(
              "Cannot concatenate " + source + " into " + target + ": it is a directory");
        }
        if (s.getLen() > 0) {
          joined.add(store.toPath(source));
        }
      }
    } catch (IOException e) {
      throw errors.translate(e, target, "concatenate into");
    }
    if (joined.isEmpty()) {
      return StreamedConcat.write(store, sources, target, overwrite, mode);
    }
    Path head = join(joined, to, target);
    if (head == null) {
      return StreamedConcat.write(store, sources, target, overwrite, mode);
    }
    try {
      FsPermission wanted =
          mode == 0
              ? FsPermission.getFileDefault().applyUMask(FsPermission.getUMask(conf))
              : new FsPermission((short) (mode & 07777));
      fs.setPermission(head, wanted);
      fs.rename(head, to, overwrite ? Options.Rename.OVERWRITE : Options.Rename.NONE);
      return HdfsUnderFileSystem.toStatus(fs.getFileStatus(to));
    } catch (IOException e) {
      deleteQuietly(head, target);
      throw errors.translate(e, target, "concatenate into");
    }
  }

  /**
   * Moves the sources beside the target and concatenates them onto the first.
   *
   * @return the joined file, under a hidden name beside the target; null when the namenode refused
   *     the concat and every source is back in its place
   */
  private Path join(List<Path> sources, Path to, String target) throws IOException {
    // Built from the parent's path string: a child name given to Path on its own would be
    // parsed, and a ':' in it read as a URI scheme.
    String parent = to.getParent().toUri().getPath();
    String prefix =
        (parent.endsWith("/") ? parent : parent + "/")
            + "."
            + HdfsUnderFileSystem.namePrefix(to.getName())
            + HdfsUnderFileSystem.TEMP_MARKER
            + UUID.randomUUID()
            + "-";
    List<Path> moved = new ArrayList<>();
    try {
      for (int i = 0; i < sources.size(); i++) {
        Path beside = new Path(to.toUri().getScheme(), to.toUri().getAuthority(), prefix + i);
        fs.rename(sources.get(i), beside, Options.Rename.NONE);
        moved.add(beside);
      }
    } catch (IOException e) {
      putBack(moved, sources, target, e);
      throw errors.translate(e, target, "concatenate into");
    }
    if (moved.size() == 1) {
      return moved.get(0);
    }
    try {
      fs.concat(moved.get(0), moved.subList(1, moved.size()).toArray(new Path[0]));
      LOG.debug("Concatenated {} files into {} in the namenode", moved.size(), target);
      return moved.get(0);
    } catch (IOException e) {
      boolean back = putBack(moved, sources, target, e);
      if (back && e instanceof RemoteException remote && REFUSALS.contains(remote.getClassName())) {
        LOG.info(
            "HDFS refused to concatenate {} files into {} ({}); copying them instead",
            moved.size(),
            target,
            firstLine(remote.getMessage()));
        return null;
      }
      throw errors.translate(e, target, "concatenate into");
    }
  }

  /**
   * Renames the moved sources back to their names (a failed concat leaves every source whole);
   * failures are added to {@code failure}.
   *
   * @return whether every one is back
   */
  private boolean putBack(
      List<Path> moved, List<Path> sources, String target, IOException failure) {
    boolean all = true;
    for (int i = moved.size() - 1; i >= 0; i--) {
      try {
        fs.rename(moved.get(i), sources.get(i), Options.Rename.NONE);
      } catch (IOException e) {
        all = false;
        failure.addSuppressed(e);
        LOG.warn(
            "Cannot move {} back to {} after a failed concatenation into {}: {}",
            moved.get(i),
            sources.get(i),
            target,
            e.toString());
      }
    }
    return all;
  }

  private void deleteQuietly(Path joined, String target) {
    try {
      fs.delete(joined, false);
    } catch (IOException e) {
      LOG.warn(
          "Cannot delete {} after a failed concatenation into {}: {}",
          joined,
          target,
          e.toString());
    }
  }

  private FileStatus statusOrNull(Path path) throws IOException {
    try {
      return fs.getFileStatus(path);
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
