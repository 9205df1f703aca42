package io.strata.underfs.hdfs;

import io.strata.common.error.StrataException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.ipc.RemoteException;

/**
 * Makes symbolic links in HDFS where the cluster allows them. Hadoop keeps symbolic links disabled
 * outside tests (HADOOP-10020) with one static flag, checked by the client and again by the
 * namenode: either refusal becomes an {@link UnsupportedOperationException} that says Strata keeps
 * the link in its own namespace only. Other failures are in the terms of the {@link
 * io.strata.underfs.UnderFileSystem} contract.
 */
final class HdfsSymlinks {
  private final HdfsUnderFileSystem ufs;
  private final DistributedFileSystem fs;
  private final HdfsErrors errors;
  private final String namenode;

  HdfsSymlinks(
      HdfsUnderFileSystem ufs, DistributedFileSystem fs, HdfsErrors errors, String namenode) {
    this.ufs = ufs;
    this.fs = fs;
    this.errors = errors;
    this.namenode = namenode;
  }

  /** See {@link HdfsUnderFileSystem#createSymlink}. */
  void create(String uri, String target) throws IOException {
    if (target.isEmpty()) {
      throw new IllegalArgumentException("A symbolic link needs a target: " + uri);
    }
    Path link = ufs.toPath(uri);
    try {
      fs.createSymlink(new Path(target), link, false);
    } catch (UnsupportedOperationException e) {
      throw refused(uri, e);
    } catch (FileNotFoundException e) {
      throw new NoSuchFileException(
          ufs.parentUri(uri), null, "the parent directory of " + uri + " does not exist");
    } catch (IOException e) {
      if (e instanceof RemoteException remote
          && remote.getClassName().equals(UnsupportedOperationException.class.getName())) {
        throw refused(uri, e);
      }
      IOException translated = errors.translate(e, uri, "create the symbolic link");
      // The namenode reports an existing name as a bare IOException ("the file exists").
      if (!(translated instanceof FileSystemException)
          && !(translated instanceof StrataException)
          && ufs.linkStatusOrNull(link) != null) {
        FileAlreadyExistsException exists = new FileAlreadyExistsException(uri);
        exists.initCause(e);
        throw exists;
      }
      throw translated;
    }
  }

  private UnsupportedOperationException refused(String uri, Exception cause) {
    UnsupportedOperationException refused =
        new UnsupportedOperationException(
            "hdfs stores"
                + " cannot hold symbolic links here: the HDFS cluster at "
                + namenode
                + " does not"
                + " allow them (Hadoop keeps them disabled), so Strata keeps the link "
                + uri
                + " in its namespace only");
    refused.initCause(cause);
    return refused;
  }
}
