package io.strata.underfs;

/**
 * The kind of an entry in an under store, as POSIX names the kinds of files. Every store holds
 * {@link #REGULAR} files and {@link #DIRECTORY directories}; which other kinds a store can hold is
 * said by its {@link UnderFileSystem} methods that create them (they fail with {@link
 * UnsupportedOperationException} where it cannot).
 */
public enum UfsFileType {
  /** A file of bytes: the only kind whose content Strata caches. */
  REGULAR,
  /** A directory: a folder of named entries (a common prefix in object stores). */
  DIRECTORY,
  /**
   * A symbolic link: a name whose content is the text of another path, kept as written (relative or
   * absolute) and resolved by whoever follows it, never by the store.
   */
  SYMLINK,
  /** A named pipe (FIFO): a meeting point of a writer and a reader, with no stored bytes. */
  FIFO,
  /**
   * A Unix domain socket's name in the file system: the entry alone, with no bytes and no listening
   * process behind it once stored.
   */
  SOCKET,
  /** A character device node: a device number a kernel serves byte by byte (/dev/null). */
  CHAR_DEVICE,
  /** A block device node: a device number a kernel serves block by block (/dev/sda). */
  BLOCK_DEVICE;

  /** Whether this kind is a FIFO, socket or device node: an entry with no stored content. */
  public boolean special() {
    return this == FIFO || this == SOCKET || this == CHAR_DEVICE || this == BLOCK_DEVICE;
  }

  /** Whether this kind is a character or block device node, which has a device number. */
  public boolean device() {
    return this == CHAR_DEVICE || this == BLOCK_DEVICE;
  }
}
