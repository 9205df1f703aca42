package io.strata.client;

import io.strata.common.WriteTypeAttribute;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.FileInfo;
import io.strata.proto.PersistenceState;
import java.util.Locale;

/**
 * What a close of a written file waits for ({@code strata.user.file.write.type}, or the write type
 * of the folder the file is made in), under the names Alluxio users know. The names are those of
 * {@link WriteTypeAttribute#KNOWN}.
 */
public enum WriteType {
  /** The bytes in the under store, and cached on the workers that reads of the file go to. */
  CACHE_THROUGH,
  /** The bytes in the under store only; they are cached at their first read. */
  THROUGH,
  /**
   * The bytes held in one worker's cache (its most durable tier) when close returns; the master's
   * persist scheduler writes them to the under store later. A file's first content only: a new
   * version of an existing file is written through (CACHE_THROUGH).
   */
  ASYNC_THROUGH,
  /** The bytes held in one worker's cache only, never written to the under store. */
  MUST_CACHE;

  /** Whether close returns before the under store has the bytes. */
  public boolean cacheOnly() {
    return this == ASYNC_THROUGH || this == MUST_CACHE;
  }

  /** The persistence state a file written with this type starts in. */
  PersistenceState persistence() {
    return switch (this) {
      case ASYNC_THROUGH -> PersistenceState.PERSISTENCE_TO_BE_PERSISTED;
      case MUST_CACHE -> PersistenceState.PERSISTENCE_NOT_PERSISTED;
      default -> PersistenceState.PERSISTENCE_PERSISTED;
    };
  }

  /**
   * The write type a folder's attributes set for what is made in it, or null when they set none (or
   * one of a later release).
   */
  static WriteType setBy(FileInfo folder) {
    String set = WriteTypeAttribute.of(folder.getXattrsMap());
    return set != null && WriteTypeAttribute.KNOWN.contains(set) ? valueOf(set) : null;
  }

  /**
   * The write type of a file just written: the one its folder set when the file was made ({@link
   * WriteTypeAttribute}, copied onto the file), else the client's. The master refuses other values;
   * one from a later release falls back to the client's.
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
