package io.strata.client;

import io.strata.common.WriteTypeAttribute;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.FileInfo;
import java.util.Locale;

/**
 * What a close of a written file waits for ({@code strata.user.file.write.type}, or the write
 * type of the folder the file was made in), under the names Alluxio users know. Only the kinds
 * that keep every byte in the under store before close returns are built; the others are
 * refused by name rather than taken for one of these. The names are those of
 * {@link WriteTypeAttribute#KNOWN}.
 */
public enum WriteType {
  /** The bytes in the under store, and cached on the workers that reads of the file go to. */
  CACHE_THROUGH,
  /** The bytes in the under store only; they are cached at their first read. */
  THROUGH;

  /**
   * The write type of a file just written: the one its folder set when the file was made
   * ({@link WriteTypeAttribute}, copied onto the file), else the client's. The master refuses
   * other values; one from a later release falls back to the client's.
   */
  static WriteType of(FileInfo file, WriteType client) {
    String set = WriteTypeAttribute.of(file.getXattrsMap());
    return set != null && WriteTypeAttribute.KNOWN.contains(set) ? valueOf(set) : client;
  }

  /**
   * The write type a configuration names, in any case.
   *
   * @throws IllegalArgumentException naming the key, the value and what to give instead
   */
  public static WriteType of(StrataConfig conf) {
    String value = conf.getString(ClientKeys.WRITE_TYPE).trim().toUpperCase(Locale.ROOT);
    String problem = WriteTypeAttribute.problem(ClientKeys.WRITE_TYPE.name(), value);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
    return valueOf(value);
  }
}
