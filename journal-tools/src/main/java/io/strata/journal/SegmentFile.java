package io.strata.journal;

import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.raftlog.segmented.LogSegment;
import org.apache.ratis.server.raftlog.segmented.LogSegmentPath;
import org.apache.ratis.server.raftlog.segmented.SegmentedRaftLogFormat;
import org.apache.ratis.util.SizeInBytes;

/**
 * One Ratis log segment file: closed ({@code log_<first>-<last>}) or open ({@code
 * log_inprogress_<first>}).
 *
 * <p>Entries are read by Ratis's own segment reader ({@link LogSegment#readSegmentFile}), which
 * checks the segment header and each entry's checksum exactly as a master does when it loads its
 * log. On top of it this class checks what Ratis leaves to its callers and reports where each
 * problem is: that a closed segment holds exactly the indexes its name promises, starting at the
 * first, and that no bytes follow its last entry. The byte offset of each entry is the segment
 * header plus the sizes of the entries before it (Ratis's record: varint32 length, entry, 4-byte
 * checksum).
 *
 * <p>An open segment normally ends in zero bytes that Ratis allocated ahead; it may also end in an
 * entry cut short by a crash, which Ratis drops (and a master drops on start). That is reported by
 * {@link Result#partialTail()}, not as damage.
 */
final class SegmentFile {
  private static final Pattern CLOSED = Pattern.compile("log_(\\d+)-(\\d+)");
  private static final Pattern OPEN = Pattern.compile("log_inprogress_(\\d+)");

  /** Reads accept entries up to this size; a master never writes more than its op size limit. */
  private static final SizeInBytes MAX_ENTRY_SIZE = SizeInBytes.valueOf("256MB");

  /** Receives the entries of a segment in index order with their byte offsets. */
  @FunctionalInterface
  interface EntryVisitor {
    void visit(LogEntryProto entry, long offset) throws IOException;
  }

  /**
   * What a whole read found.
   *
   * @param entries entries read
   * @param lastIndex index of the last entry, or {@code first - 1} when none
   * @param end offset just past the last entry
   * @param partialTail bytes of an entry cut short at the end of an open segment (0: none)
   */
  record Result(int entries, long lastIndex, long end, long partialTail) {}

  private final Path path;
  private final LogSegmentPath ratisPath;
  private final long first;
  private final long last;
  private final boolean open;

  private SegmentFile(Path path, LogSegmentPath ratisPath, long first, long last, boolean open) {
    this.path = path;
    this.ratisPath = ratisPath;
    this.first = first;
    this.last = last;
    this.open = open;
  }

  /** The segment a file is, or null when the file is not a Ratis log segment. */
  static SegmentFile of(Path file) {
    LogSegmentPath ratisPath = LogSegmentPath.matchLogSegment(file);
    if (ratisPath == null) {
      return null;
    }
    String name = file.getFileName().toString();
    Matcher m = CLOSED.matcher(name);
    if (m.matches()) {
      return new SegmentFile(
          file, ratisPath, Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), false);
    }
    m = OPEN.matcher(name);
    if (m.lookingAt()) {
      return new SegmentFile(file, ratisPath, Long.parseLong(m.group(1)), -1, true);
    }
    return null;
  }

  Path path() {
    return path;
  }

  long first() {
    return first;
  }

  /** Last index by the file name; -1 for an open segment. */
  long last() {
    return last;
  }

  boolean open() {
    return open;
  }

  /**
   * Reads every entry, passing each to the visitor as it is read, and checks the segment as the
   * class documents.
   *
   * @throws JournalDamage naming the file, the offset and the index where reading stopped
   */
  Result read(EntryVisitor visitor) throws IOException {
    long fileSize = Files.size(path);
    if (open && nonZeroTail(0, fileSize) == 0) {
      // Created (and maybe preallocated) but never written: Ratis deletes it on start.
      return new Result(0, first - 1, 0, 0);
    }
    checkHeader(fileSize);
    long[] offset = {SegmentedRaftLogFormat.getHeaderLength()};
    long[] expected = {first};
    int count;
    try {
      count =
          LogSegment.readSegmentFile(
              path.toFile(),
              ratisPath.getStartEnd(),
              MAX_ENTRY_SIZE,
              RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION,
              null,
              entry -> {
                if (entry.getIndex() != expected[0]) {
                  throw new SegmentStop(
                      new JournalDamage(
                          path,
                          offset[0],
                          entry.getIndex(),
                          "entry "
                              + entry.getIndex()
                              + " where entry "
                              + expected[0]
                              + " was expected"));
                }
                try {
                  visitor.visit(entry, offset[0]);
                } catch (IOException e) {
                  throw new SegmentStop(e);
                }
                offset[0] += size(entry);
                expected[0]++;
              });
    } catch (SegmentStop stop) {
      throw stop.getCause();
    } catch (IOException | RuntimeException e) {
      throw new JournalDamage(
          path, offset[0], expected[0], "cannot read the entry: " + e.getMessage(), e);
    }
    long lastIndex = first + count - 1;
    if (!open && lastIndex != last) {
      throw new JournalDamage(
          path,
          offset[0],
          lastIndex + 1,
          "the segment holds entries "
              + first
              + " to "
              + lastIndex
              + " where its name promises "
              + first
              + " to "
              + last
              + " (the rest is unreadable or missing)");
    }
    long partialTail = 0;
    long trailing = nonZeroTail(offset[0], fileSize);
    if (trailing > 0) {
      if (!open) {
        throw new JournalDamage(
            path, offset[0], -1, trailing + " unexpected bytes after the last entry");
      }
      partialTail = trailing;
    }
    return new Result(count, lastIndex, offset[0], partialTail);
  }

  private void checkHeader(long fileSize) throws IOException {
    ByteBuffer expected = SegmentedRaftLogFormat.getHeaderBytebuffer();
    byte[] header = new byte[expected.remaining()];
    expected.get(header);
    byte[] actual;
    try (InputStream in = Files.newInputStream(path)) {
      actual = in.readNBytes(header.length);
    }
    if (fileSize < header.length) {
      throw new JournalDamage(
          path, 0, -1, "the file is shorter than a segment header (" + fileSize + " bytes)");
    }
    if (!Arrays.equals(header, actual)) {
      String text = new String(actual, StandardCharsets.ISO_8859_1).replaceAll("\\p{Cntrl}", "?");
      throw new JournalDamage(path, 0, -1, "the segment header is not Ratis's (" + text + ")");
    }
  }

  /** Bytes from {@code from} to the last non-zero byte of the file (0 when all are zero). */
  private long nonZeroTail(long from, long fileSize) throws IOException {
    if (from >= fileSize) {
      return 0;
    }
    long lastNonZero = -1;
    try (InputStream in = Files.newInputStream(path)) {
      in.skipNBytes(from);
      byte[] buf = new byte[1 << 16];
      long pos = from;
      for (int n; (n = in.read(buf)) > 0; pos += n) {
        for (int i = 0; i < n; i++) {
          if (buf[i] != 0) {
            lastNonZero = pos + i;
          }
        }
      }
    }
    return lastNonZero < 0 ? 0 : lastNonZero + 1 - from;
  }

  /** Bytes an entry takes in a segment file: varint32 length, the entry, 4-byte checksum. */
  static long size(LogEntryProto entry) {
    int n = entry.getSerializedSize();
    return CodedOutputStream.computeUInt32SizeNoTag(n) + (long) n + 4;
  }

  @Override
  public String toString() {
    return path.getFileName().toString();
  }

  /** Carries a visitor's failure out of Ratis's reader, which takes a plain Consumer. */
  private static final class SegmentStop extends RuntimeException {
    SegmentStop(IOException cause) {
      super(cause);
    }

    @Override
    public synchronized IOException getCause() {
      return (IOException) super.getCause();
    }
  }
}
