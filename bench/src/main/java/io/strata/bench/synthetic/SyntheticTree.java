package io.strata.bench.synthetic;

import java.util.Locale;

/**
 * The shape of a generated tree, read from the authority of a {@code synthetic://} URI: {@code
 * files-<N>-fanout-<F>[-size-<B>]}. The root holds {@code ceil(N / F)} directories {@code d0 ...
 * d<ceil(N/F)-1>}; directory {@code i} holds files {@code f0 ... } numbered from 0, {@code F} of
 * them (the last directory the rest), each {@code B} bytes (default 0). Numbers are zero-padded to
 * one width per level, so names sort in number order. For example {@code
 * synthetic://files-10000000-fanout-1000/} is 10,000 directories of 1,000 empty files, and {@code
 * synthetic://files-1000000-fanout-1000000/} one directory of a million.
 *
 * @param files how many files in all
 * @param fanout files per directory
 * @param fileSize bytes of every file
 */
public record SyntheticTree(long files, long fanout, long fileSize) {
  /** The authority's grammar, for error messages. */
  static final String FORM =
      "files-<count>-fanout-<per directory>[-size-<bytes>], such as"
          + " synthetic://files-10000000-fanout-1000/";

  public SyntheticTree {
    if (files < 1 || fanout < 1 || fileSize < 0) {
      throw new IllegalArgumentException(
          "A synthetic tree needs at least one file, a fanout of"
              + " at least 1 and a size of 0 or more; got files="
              + files
              + " fanout="
              + fanout
              + " size="
              + fileSize
              + " ("
              + FORM
              + ")");
    }
  }

  /** Parses an authority such as {@code files-1000-fanout-10-size-4096}. */
  public static SyntheticTree parse(String authority) {
    String[] parts = authority.toLowerCase(Locale.ROOT).split("-");
    if ((parts.length != 4 && parts.length != 6)
        || !parts[0].equals("files")
        || !parts[2].equals("fanout")
        || (parts.length == 6 && !parts[4].equals("size"))) {
      throw new IllegalArgumentException(
          "Not a synthetic tree: '" + authority + "'; expected " + FORM);
    }
    try {
      return new SyntheticTree(
          Long.parseLong(parts[1]),
          Long.parseLong(parts[3]),
          parts.length == 6 ? Long.parseLong(parts[5]) : 0);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "Not a number in the synthetic tree '"
              + authority
              + "': "
              + e.getMessage()
              + "; expected "
              + FORM);
    }
  }

  /** The URI of the tree's root, with a trailing slash. */
  public String uri() {
    return SyntheticUnderFileSystem.SCHEME
        + "://files-"
        + files
        + "-fanout-"
        + fanout
        + (fileSize == 0 ? "" : "-size-" + fileSize)
        + "/";
  }

  /** Directories under the root. */
  public long directories() {
    return (files + fanout - 1) / fanout;
  }

  /** Files in directory {@code dir}. */
  public long filesIn(long dir) {
    return Math.min(fanout, files - dir * fanout);
  }

  /** Name of directory {@code i}. */
  public String directoryName(long i) {
    return "d" + pad(i, directories() - 1);
  }

  /** Name of file {@code j} of a directory. */
  public String fileName(long j) {
    return "f" + pad(j, fanout - 1);
  }

  /** Inodes that loading the whole tree below a mount point creates (directories and files). */
  public long inodes() {
    return directories() + files;
  }

  /** Parses a name of one level ({@code d<digits>} or {@code f<digits>}); -1 when it is not. */
  static long index(String name, char prefix, long width, long count) {
    if (name.length() != width + 1 || name.charAt(0) != prefix) {
      return -1;
    }
    long v = 0;
    for (int k = 1; k < name.length(); k++) {
      char c = name.charAt(k);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v < count ? v : -1;
  }

  /** Digits of the widest number of a level. */
  static int width(long max) {
    return Long.toString(Math.max(0, max)).length();
  }

  private static String pad(long v, long max) {
    String s = Long.toString(v);
    int w = width(max);
    return s.length() >= w ? s : "0".repeat(w - s.length()) + s;
  }
}
