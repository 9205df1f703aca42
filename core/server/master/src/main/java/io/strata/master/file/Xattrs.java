package io.strata.master.file;

import com.google.protobuf.ByteString;
import io.strata.common.WriteTypeAttribute;
import io.strata.common.error.StrataException;
import io.strata.proto.journal.InodeEntry;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;

/**
 * The limits of an inode's extended attributes, which travel with its status in every listing and
 * sit in the metastore with it: names of 1 to 255 bytes with no NUL, values of at most 64 KiB, and
 * at most 64 KiB of names and values on one inode (as Linux allows one value). S3 metadata fits
 * well inside: 2 KiB of user metadata and 10 tags.
 */
final class Xattrs {
  static final int MAX_NAME_BYTES = 255;
  static final int MAX_TOTAL_BYTES = 64 << 10;

  private Xattrs() {}

  /**
   * Fails with INVALID_ARGUMENT when an attribute the namespace acts on is given a value it cannot
   * act on (a folder's write type, {@link WriteTypeAttribute}).
   */
  static void checkValues(String path, Map<String, ByteString> set) throws StrataException {
    String writeType = WriteTypeAttribute.of(set);
    String problem =
        writeType == null
            ? null
            : WriteTypeAttribute.problem(WriteTypeAttribute.NAME + " of " + path, writeType);
    if (problem != null) {
      throw StrataException.invalidArgument(problem);
    }
  }

  /**
   * Gives a new child the write type its parent sets, unless the child sets one itself: folders
   * pass it down to what is made in them afterwards.
   */
  static void inherit(InodeEntry parent, InodeEntry.Builder child) {
    ByteString writeType = parent.getXattrsMap().get(WriteTypeAttribute.NAME);
    if (writeType != null && !child.containsXattrs(WriteTypeAttribute.NAME)) {
      child.putXattrs(WriteTypeAttribute.NAME, writeType);
    }
  }

  /** Fails with INVALID_ARGUMENT, naming the path and the attribute, when a name is bad. */
  static void checkNames(String path, Collection<String> names) throws StrataException {
    for (String name : names) {
      int bytes = name.getBytes(StandardCharsets.UTF_8).length;
      if (bytes == 0 || bytes > MAX_NAME_BYTES || name.indexOf('\0') >= 0) {
        throw StrataException.invalidArgument(
            "Bad extended attribute name '"
                + name
                + "' for "
                + path
                + ": give 1 to "
                + MAX_NAME_BYTES
                + " bytes without NUL");
      }
    }
  }

  /** Fails with INVALID_ARGUMENT when the attributes an inode would have are too large. */
  static void checkSize(String path, Map<String, ByteString> all) throws StrataException {
    long total = 0;
    for (Map.Entry<String, ByteString> e : all.entrySet()) {
      total += e.getKey().getBytes(StandardCharsets.UTF_8).length + e.getValue().size();
    }
    if (total > MAX_TOTAL_BYTES) {
      throw StrataException.invalidArgument(
          "Extended attributes of "
              + path
              + " would take "
              + total
              + " bytes, over the "
              + MAX_TOTAL_BYTES
              + " an inode may hold: remove some");
    }
  }
}
