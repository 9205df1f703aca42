package io.strata.common;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

/**
 * The write type a folder sets for the files and folders made in it afterwards (a client's {@code
 * strata.user.file.write.type} is the default where no folder sets one): an extended attribute of
 * the namespace, journaled with the inode, that each new child copies from its parent when it is
 * made, as Alluxio's per-path write types are inherited by new children.
 */
public final class WriteTypeAttribute {
  /** The extended attribute's name; its value is a write type's name. */
  public static final String NAME = "strata.write.type";

  /** The write types a folder may set: those the client builds. */
  public static final Set<String> KNOWN =
      Set.of("CACHE_THROUGH", "THROUGH", "ASYNC_THROUGH", "MUST_CACHE");

  private WriteTypeAttribute() {}

  /** The write type an inode's attributes set, or null when they set none. */
  public static String of(Map<String, ByteString> xattrs) {
    ByteString value = xattrs.get(NAME);
    return value == null ? null : value.toString(StandardCharsets.UTF_8);
  }

  /**
   * Why {@code value} cannot be a write type, or null when it can; {@code what} names where it was
   * given (a folder's attribute, a configuration key).
   */
  public static String problem(String what, String value) {
    if (KNOWN.contains(value)) {
      return null;
    }
    return what
        + " is '"
        + value
        + "': give CACHE_THROUGH, THROUGH, ASYNC_THROUGH or"
        + " MUST_CACHE";
  }
}
