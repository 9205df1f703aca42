package io.strata.underfs.hdfs;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.hdfs.server.namenode.SafeModeException;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.RetriableException;
import org.apache.hadoop.ipc.StandbyException;
import org.apache.hadoop.net.ConnectTimeoutException;
import org.apache.hadoop.security.AccessControlException;

/**
 * Turns the exceptions of the Hadoop client into the ones the {@link
 * io.strata.underfs.UnderFileSystem} contract promises: missing paths become {@link
 * NoSuchFileException}, existing ones {@link java.nio.file.FileAlreadyExistsException}, and the
 * failures an operator must act on (safe mode, permissions, an unreachable namenode) become {@link
 * StrataException}s whose message names the namenode, the path and the fix. Anything else stays an
 * {@link IOException} naming the namenode and the path, with the cause attached.
 */
final class HdfsErrors {
  private final String namenode;
  private final String user;

  /**
   * @param namenode the namenode address (the mount URI's authority) named in messages
   * @param user the user the store acts as, named when permission is denied
   */
  HdfsErrors(String namenode, String user) {
    this.namenode = namenode;
    this.user = user;
  }

  /**
   * The exception to throw for a failure of {@code action} ("read", "list", ...) on {@code uri};
   * exceptions already in Strata's terms pass through unchanged.
   */
  IOException translate(IOException thrown, String uri, String action) {
    if (thrown instanceof StrataException || thrown instanceof FileSystemException) {
      return thrown;
    }
    IOException e = unwrap(thrown);
    if (isSafeMode(thrown) || isSafeMode(e)) {
      return new StrataException(
          ErrorCode.UNAVAILABLE,
          "HDFS namenode "
              + namenode
              + " is in safe mode: wait for it to leave, or run `hdfs dfsadmin -safemode leave`"
              + " (cannot "
              + action
              + " "
              + uri
              + ")",
          thrown);
    }
    if (e instanceof AccessControlException) {
      return new StrataException(
          ErrorCode.PERMISSION_DENIED,
          "HDFS namenode "
              + namenode
              + " denied user '"
              + user
              + "' permission to "
              + action
              + " "
              + uri
              + " ("
              + firstLine(e.getMessage())
              + "): grant that user access in HDFS, or mount with "
              + "--option "
              + HdfsOptions.USER
              + "=<a user who has it>",
          thrown);
    }
    if (e instanceof FileNotFoundException) {
      NoSuchFileException missing = new NoSuchFileException(uri);
      missing.initCause(thrown);
      return missing;
    }
    if (e instanceof PathIsNotEmptyDirectoryException) {
      DirectoryNotEmptyException notEmpty = new DirectoryNotEmptyException(uri);
      notEmpty.initCause(thrown);
      return notEmpty;
    }
    if (e instanceof FileAlreadyExistsException) {
      java.nio.file.FileAlreadyExistsException exists =
          new java.nio.file.FileAlreadyExistsException(uri);
      exists.initCause(thrown);
      return exists;
    }
    if (e instanceof StandbyException) {
      return new StrataException(
          ErrorCode.UNAVAILABLE,
          "HDFS namenode "
              + namenode
              + " is a standby namenode (cannot "
              + action
              + " "
              + uri
              + "): mount the HA "
              + "nameservice (hdfs://<nameservice>/path) with its hdfs-site.xml in "
              + HdfsOptions.CONFIG_FILES,
          thrown);
    }
    Throwable unreachable = unreachableCause(thrown);
    if (unreachable != null) {
      return new StrataException(
          ErrorCode.UNAVAILABLE,
          "Cannot reach the HDFS namenode at "
              + namenode
              + ": check the mount URI and that HDFS is running (cannot "
              + action
              + " "
              + uri
              + ": "
              + rootMessage(unreachable)
              + ")",
          thrown);
    }
    return new IOException(
        "HDFS namenode "
            + namenode
            + ": cannot "
            + action
            + " "
            + uri
            + ": "
            + (e instanceof ParentNotDirectoryException
                ? "a parent is a file, not a directory: "
                : "")
            + e.getClass().getSimpleName()
            + ": "
            + firstLine(e.getMessage()),
        thrown);
  }

  /**
   * The exception the namenode really threw. The client unwraps some remote exceptions for some
   * calls only (a non-empty directory arrives wrapped), so every call goes through this.
   */
  private static IOException unwrap(IOException e) {
    if (e instanceof RemoteException remote) {
      return remote.unwrapRemoteException(
          SafeModeException.class,
          AccessControlException.class,
          FileNotFoundException.class,
          FileAlreadyExistsException.class,
          PathIsNotEmptyDirectoryException.class,
          ParentNotDirectoryException.class,
          StandbyException.class,
          RetriableException.class);
    }
    return e;
  }

  /**
   * Safe mode arrives as SafeModeException, or, from an HA namenode still starting, as a
   * RetriableException wrapping one; unwrapping keeps only its message.
   */
  private static boolean isSafeMode(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SafeModeException) {
        return true;
      }
      if (c instanceof RemoteException remote
          && remote.getClassName().equals(SafeModeException.class.getName())) {
        return true;
      }
      if (c instanceof RetriableException
          && c.getMessage() != null
          && c.getMessage().contains("safe mode")) {
        return true;
      }
    }
    return false;
  }

  private static Throwable unreachableCause(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof ConnectException
          || c instanceof NoRouteToHostException
          || c instanceof UnknownHostException
          || c instanceof ConnectTimeoutException) {
        return c;
      }
    }
    return null;
  }

  /** The innermost message: Hadoop's outer ones repeat addresses and wiki links. */
  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message =
        root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return firstLine(message);
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
