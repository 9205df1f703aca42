package io.strata.tests;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Generates a tree of files whose sizes hit the edges of the block layout (empty, tiny, one byte
 * under, at and over a block, several blocks) in nested folders with odd but legal names, and
 * remembers each file's length and SHA-256 so reads can be checked against the source.
 */
public final class TestTree {
  /** Names that exercise encoding and quoting: spaces, unicode, shell metacharacters. */
  private static final String[] ODD_NAMES = {
    "with space", "ünïcødé-名前", "hash#mark", "per%cent", "plus+sign", "-leading-dash",
    "equals=sign", "quote'single", "semi;colon", "brackets[1]", "dot.in.name", "tilde~",
    "comma,list", "at@sign", "UPPER lower", "emoji-\uD83D\uDE80"
  };

  private final Map<String, FileFacts> files = new LinkedHashMap<>();
  private final List<String> directories = new ArrayList<>();

  /** A generated file: its length and SHA-256 (hex). */
  public record FileFacts(long length, String sha256) {}

  private TestTree() {}

  /**
   * Writes about {@code fileCount} files below {@code root}.
   *
   * @param blockSize the cluster's block size, so lengths land on block edges
   * @param maxBlocks the largest file has this many blocks plus a partial one
   */
  public static TestTree generate(
      Path root, int fileCount, long blockSize, int maxBlocks, long seed) throws IOException {
    TestTree tree = new TestTree();
    Random random = new Random(seed);
    long[] edges = {
      0,
      1,
      17,
      4096,
      blockSize - 1,
      blockSize,
      blockSize + 1,
      2 * blockSize,
      2 * blockSize + 3,
      maxBlocks * blockSize + blockSize / 3
    };
    List<String> dirs = new ArrayList<>();
    dirs.add("");
    for (int d = 0; d < 24; d++) {
      String parent = dirs.get(random.nextInt(dirs.size()));
      String name = d < ODD_NAMES.length ? ODD_NAMES[d] + "-d" : "dir" + d;
      String dir = parent.isEmpty() ? name : parent + "/" + name;
      Files.createDirectories(root.resolve(dir));
      dirs.add(dir);
      tree.directories.add(dir);
    }
    for (int i = 0; i < fileCount; i++) {
      String dir = dirs.get(random.nextInt(dirs.size()));
      String name = i < ODD_NAMES.length ? ODD_NAMES[i] : "file-" + i + ".bin";
      String rel = dir.isEmpty() ? name : dir + "/" + name;
      long length;
      if (i < edges.length) {
        length = edges[i];
      } else if (i % 50 == 0) {
        length = edges[random.nextInt(edges.length)];
      } else {
        length = random.nextInt(8192);
      }
      tree.files.put(rel, writeRandom(root.resolve(rel), length, random.nextLong()));
    }
    return tree;
  }

  /** Writes {@code length} pseudo-random bytes and returns the file's facts. */
  public static FileFacts writeRandom(Path file, long length, long seed) throws IOException {
    MessageDigest sha = sha256();
    Random random = new Random(seed);
    byte[] buf = new byte[64 * 1024];
    try (OutputStream out = Files.newOutputStream(file)) {
      long left = length;
      while (left > 0) {
        int n = (int) Math.min(buf.length, left);
        random.nextBytes(buf);
        out.write(buf, 0, n);
        sha.update(buf, 0, n);
        left -= n;
      }
    }
    return new FileFacts(length, HexFormat.of().formatHex(sha.digest()));
  }

  /** Relative path (with '/') -> facts, in generation order. */
  public Map<String, FileFacts> files() {
    return files;
  }

  /** The relative path of the largest file. */
  public String largestFile() {
    return files.entrySet().stream()
        .max(Map.Entry.comparingByValue((a, b) -> Long.compare(a.length(), b.length())))
        .orElseThrow()
        .getKey();
  }

  public List<String> directories() {
    return directories;
  }

  public static String sha256(InputStream in) throws IOException {
    MessageDigest sha = sha256();
    byte[] buf = new byte[64 * 1024];
    int n;
    while ((n = in.read(buf)) > 0) {
      sha.update(buf, 0, n);
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  public static String sha256(byte[] bytes) {
    return HexFormat.of().formatHex(sha256().digest(bytes));
  }

  static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
