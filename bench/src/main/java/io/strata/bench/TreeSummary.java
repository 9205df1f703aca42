package io.strata.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * What a folder tree holds, to tell whether an extracted copy matches its source: the count of
 * regular files, folders and symbolic links below the root, the bytes of the regular files, and one
 * checksum over every entry's relative path, kind and content (a link's target), taken in name
 * order so that two equal trees give equal summaries on any file system. Links are not followed; a
 * hard link counts as the regular file it is.
 */
record TreeSummary(long files, long folders, long symlinks, long bytes, long checksum) {

  /** Walks {@code root}, reading every regular file whole. */
  static TreeSummary of(Path root) throws IOException {
    List<String> entries = new ArrayList<>();
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
            if (!dir.equals(root)) {
              entries.add(root.relativize(dir).toString());
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            entries.add(root.relativize(file).toString());
            return FileVisitResult.CONTINUE;
          }
        });
    entries.sort(null);
    long files = 0;
    long folders = 0;
    long symlinks = 0;
    long bytes = 0;
    CRC32C sum = new CRC32C();
    byte[] buf = new byte[1 << 16];
    for (String rel : entries) {
      Path p = root.resolve(rel);
      sum.update(rel.getBytes(StandardCharsets.UTF_8));
      if (Files.isSymbolicLink(p)) {
        symlinks++;
        sum.update('l');
        sum.update(Files.readSymbolicLink(p).toString().getBytes(StandardCharsets.UTF_8));
      } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
        folders++;
        sum.update('d');
      } else {
        files++;
        sum.update('f');
        try (InputStream in = Files.newInputStream(p)) {
          for (int n = in.read(buf); n > 0; n = in.read(buf)) {
            sum.update(buf, 0, n);
            bytes += n;
          }
        }
      }
    }
    return new TreeSummary(files, folders, symlinks, bytes, sum.getValue());
  }

  /** How {@code copy} differs from this summary, or null when it does not. */
  String differences(TreeSummary copy) {
    if (equals(copy)) {
      return null;
    }
    if (files != copy.files || folders != copy.folders || symlinks != copy.symlinks) {
      return String.format(
          "%d files, %d folders, %d symlinks; expected %d, %d, %d",
          copy.files, copy.folders, copy.symlinks, files, folders, symlinks);
    }
    if (bytes != copy.bytes) {
      return String.format("%d bytes in files, expected %d", copy.bytes, bytes);
    }
    return "same counts and sizes, different names or contents";
  }
}
