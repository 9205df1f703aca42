package io.strata.underfs.hdfs;

import io.strata.underfs.UfsOutputStream;
import java.io.IOException;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A file being written to HDFS. Bytes go to a hidden temporary file in the target's directory
 * ({@code .<name>.strata-tmp-<uuid>}, left out of listings); {@link #close()} completes it and
 * renames it to the target in one namenode operation, so the target name only ever shows a complete
 * file. {@link #abort()} deletes the temporary file. One writer thread at a time.
 */
final class HdfsOutputStream extends UfsOutputStream {
  private static final Logger LOG = LoggerFactory.getLogger(HdfsOutputStream.class);

  private final DistributedFileSystem fs;
  private final HdfsErrors errors;
  private final FSDataOutputStream out;
  private final Path temp;
  private final Path target;
  private final String uri;
  private final boolean overwrite;

  /** The permission to set after writing when the create-time umask narrowed it, or null. */
  private final FsPermission exactPermission;

  private boolean closed;
  private String fingerprint = "";

  HdfsOutputStream(
      DistributedFileSystem fs,
      HdfsErrors errors,
      FSDataOutputStream out,
      Path temp,
      Path target,
      String uri,
      boolean overwrite,
      FsPermission exactPermission) {
    this.fs = fs;
    this.errors = errors;
    this.out = out;
    this.temp = temp;
    this.target = target;
    this.uri = uri;
    this.overwrite = overwrite;
    this.exactPermission = exactPermission;
  }

  @Override
  public void write(int b) throws IOException {
    checkOpen();
    try {
      out.write(b);
    } catch (IOException e) {
      throw errors.translate(e, uri, "write");
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    checkOpen();
    try {
      out.write(b, off, len);
    } catch (IOException e) {
      throw errors.translate(e, uri, "write");
    }
  }

  @Override
  public void flush() throws IOException {
    checkOpen();
    try {
      out.flush();
    } catch (IOException e) {
      throw errors.translate(e, uri, "write");
    }
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("The HDFS write of " + uri + " is already closed or aborted");
    }
  }

  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      // Closing waits until every datanode of the pipeline has the last packet and the
      // namenode has completed the file.
      out.close();
      if (exactPermission != null) {
        fs.setPermission(temp, exactPermission);
      }
      // Without OVERWRITE the rename refuses an existing target atomically; with it the old
      // file is replaced in the same step, so readers see the old or the new file, never none.
      fs.rename(temp, target, overwrite ? Options.Rename.OVERWRITE : Options.Rename.NONE);
      fingerprint = HdfsUnderFileSystem.fingerprint(fs.getFileStatus(target));
    } catch (IOException e) {
      deleteTemp();
      throw errors.translate(e, uri, "write");
    }
  }

  @Override
  public synchronized void abort() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      out.close();
    } catch (IOException e) {
      // The write is being thrown away; a failure to complete it changes nothing.
      LOG.debug("Closing the aborted HDFS write of {} failed: {}", uri, e.toString());
    }
    try {
      fs.delete(temp, false);
    } catch (IOException e) {
      throw errors.translate(e, uri, "abort the write of");
    }
  }

  private void deleteTemp() {
    try {
      fs.delete(temp, false);
    } catch (IOException e) {
      LOG.warn(
          "Cannot delete the temporary file {} of a failed write of {}: {}",
          temp,
          uri,
          e.toString());
    }
  }

  @Override
  public String fingerprint() {
    return fingerprint;
  }
}
