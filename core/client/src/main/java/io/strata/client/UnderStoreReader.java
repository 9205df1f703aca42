package io.strata.client;

import io.strata.client.master.MasterClient;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.ListMountsRequest;
import io.strata.proto.MountInfo;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderStores;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads file ranges straight from the under store, the last resort when no worker can serve a
 * block. Stores are opened with the options of the file's mount (from the master's mount table with
 * secret values and without Strata's own options, remembered per mount id) and shared by every
 * stream of the client. Thread-safe.
 *
 * <p>A file that carries an under-store fingerprint is read only as the version it was opened on:
 * the store's fingerprint is compared with it before and after each read (a rewrite can land during
 * the read), and a mismatch fails the read with an error that says to open the file again. Files
 * without a fingerprint are not checked.
 */
final class UnderStoreReader implements AutoCloseable {
  private final MasterClient master;
  private final Map<Long, MountInfo> mounts = new ConcurrentHashMap<>();
  private volatile UnderStores stores;

  UnderStoreReader(MasterClient master) {
    this.master = master;
  }

  /**
   * Reads exactly {@code len} bytes of {@code file} at {@code position}, of the version the file's
   * fingerprint names.
   *
   * @throws StrataException naming the path when the store fails, the file is shorter, or it
   *     changed in the under store (FAILED_PRECONDITION, see {@link #changed})
   */
  void readFully(FileInfo file, long position, byte[] buf, int off, int len)
      throws StrataException {
    String ufsPath = file.getUfsPath();
    try {
      UnderFileSystem ufs = stores().get(ufsPath, options(file.getMountId()));
      checkUnchanged(ufs, file);
      int done = 0;
      while (done < len) {
        int n = ufs.read(ufsPath, position + done, buf, off + done, len - done);
        if (n < 0) {
          checkUnchanged(ufs, file);
          throw new StrataException(
              ErrorCode.FAILED_PRECONDITION,
              "The under-store file "
                  + ufsPath
                  + " of "
                  + file.getPath()
                  + " ends before byte "
                  + (position + len)
                  + "; it changed behind Strata's back. Reload its metadata or rewrite the file.");
        }
        done += n;
      }
      checkUnchanged(ufs, file);
    } catch (NoSuchFileException e) {
      throw new StrataException(
          ErrorCode.NOT_FOUND,
          "Path does not exist in the under store: " + file.getPath() + " (" + ufsPath + ")",
          e);
    } catch (StrataException e) {
      throw e;
    } catch (IOException | IllegalArgumentException e) {
      throw new StrataException(
          ErrorCode.UNAVAILABLE,
          "Cannot read "
              + file.getPath()
              + " from its under store "
              + ufsPath
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * The fingerprint the under store gives {@code file} now.
   *
   * @throws StrataException naming the path when the store cannot tell
   */
  String fingerprint(FileInfo file) throws StrataException {
    String ufsPath = file.getUfsPath();
    try {
      return stores().get(ufsPath, options(file.getMountId())).fingerprint(ufsPath);
    } catch (NoSuchFileException e) {
      throw new StrataException(
          ErrorCode.NOT_FOUND,
          "Path does not exist in the under store: " + file.getPath() + " (" + ufsPath + ")",
          e);
    } catch (IOException | IllegalArgumentException e) {
      throw new StrataException(
          ErrorCode.UNAVAILABLE,
          "Cannot ask the under store "
              + ufsPath
              + " about "
              + file.getPath()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** Throws {@link #changed} unless the file is unfingerprinted or still has its fingerprint. */
  private static void checkUnchanged(UnderFileSystem ufs, FileInfo file) throws IOException {
    String expected = file.getUfsFingerprint();
    if (expected.isEmpty()) {
      return;
    }
    String now = ufs.fingerprint(file.getUfsPath());
    if (!expected.equals(now)) {
      throw changed(file, now);
    }
  }

  /**
   * The error of a read of {@code file} whose under-store file no longer has the fingerprint the
   * file was opened with.
   */
  static StrataException changed(FileInfo file, String now) {
    return new StrataException(
        ErrorCode.STALE,
        file.getPath()
            + " changed in its under store since it was opened (fingerprint "
            + file.getUfsFingerprint()
            + ", now "
            + now
            + "); open it again to read the new version");
  }

  private Map<String, String> options(long mountId) throws StrataException {
    MountInfo mount = mounts.get(mountId);
    if (mount == null) {
      ListMountsRequest request =
          ListMountsRequest.newBuilder().setIncludeSecrets(true).setStoreOptionsOnly(true).build();
      for (MountInfo m : master.call(s -> s.listMounts(request)).getMountsList()) {
        mounts.put(m.getMountId(), m);
      }
      mount = mounts.get(mountId);
    }
    return mount == null ? Map.of() : mount.getOptionsMap();
  }

  private UnderStores stores() {
    UnderStores s = stores;
    if (s == null) {
      synchronized (this) {
        s = stores;
        if (s == null) {
          s = new UnderStores();
          stores = s;
        }
      }
    }
    return s;
  }

  @Override
  public void close() throws IOException {
    UnderStores s = stores;
    if (s != null) {
      s.close();
    }
  }
}
