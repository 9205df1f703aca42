package io.strata.master.journal;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.strata.common.Version;
import io.strata.common.error.StrataException;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.JournalHeader;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's journal: the ordered log of {@link JournalEntry} records from which the
 * namespace is rebuilt. This package is the only code that knows its file format:
 *
 * <ul>
 *   <li>The journal folder holds segment files named {@code segment-<first sequence>.log}
 *       (20 digits, so names sort by sequence) and a {@code checkpoints/} folder.
 *   <li>A record is a protobuf varint32 length, that many bytes of one protobuf message, and the
 *       CRC32C of those bytes as 4 big-endian bytes.
 *   <li>A segment starts with a {@link JournalHeader} record (kind {@code "segment"},
 *       {@code format_version}, the writing {@code release}, {@code first_sequence}) followed by
 *       {@link JournalEntry} records whose sequences go up by one, continuing across segments.
 *   <li>A checkpoint's header file holds one {@link JournalHeader} record (kind
 *       {@code "checkpoint"}); see {@link Checkpoints}.
 * </ul>
 *
 * <p>Guarantees: {@link #append} returns only after its records were handed to the operating
 * system (and forced to the device when fsync is on), so a process crash never loses an entry
 * whose change was acknowledged. On replay a damaged record at the very end of the last segment
 * -- a write cut short by a crash -- is dropped and cut off the file; damage anywhere else, a gap
 * in sequences, or a header of a newer format fails with a message naming the file and offset.
 * After an append fails the journal refuses further appends: the file may end in a partial
 * record, and only a restart (which drops it) makes the journal safe to extend again.
 */
public final class Journal implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
  static final String SEGMENT_KIND = "segment";
  static final String CHECKPOINT_KIND = "checkpoint";
  private static final Pattern SEGMENT_NAME = Pattern.compile("segment-(\\d{20})\\.log");

  /** Receives replayed entries in sequence order. */
  @FunctionalInterface
  public interface EntryConsumer {
    void accept(JournalEntry entry) throws IOException;
  }

  private final Path dir;
  private final long segmentSize;
  private final boolean fsync;
  /** Segment files by first sequence. */
  private final TreeMap<Long, Path> segments = new TreeMap<>();

  private FileChannel current;
  private long currentFirst;
  private long currentSize;
  private long lastSequence;
  private IOException failure;

  public Journal(Path dir, long segmentSize, boolean fsync) throws IOException {
    this.dir = dir;
    this.segmentSize = segmentSize;
    this.fsync = fsync;
    Files.createDirectories(dir);
    try (Stream<Path> files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Matcher m = SEGMENT_NAME.matcher(p.getFileName().toString());
        if (m.matches()) {
          segments.put(Long.parseLong(m.group(1)), p);
        }
      }
    }
  }

  /**
   * Reads every segment in order and passes each entry with a sequence above
   * {@code afterSequence} to {@code consumer}. Returns the last sequence seen (at least
   * {@code afterSequence}). Must be called once, before {@link #startWriting}.
   */
  public synchronized long replay(long afterSequence, EntryConsumer consumer) throws IOException {
    long last = afterSequence;
    List<Map.Entry<Long, Path>> list = new ArrayList<>(segments.entrySet());
    for (int i = 0; i < list.size(); i++) {
      Path file = list.get(i).getValue();
      boolean isLast = i == list.size() - 1;
      last = replaySegment(file, isLast, last, consumer);
    }
    lastSequence = last;
    return last;
  }

  private long replaySegment(Path file, boolean isLast, long last, EntryConsumer consumer)
      throws IOException {
    try (JournalReader reader = new JournalReader(file)) {
      JournalHeader header;
      try {
        byte[] h = reader.next();
        if (h == null) {
          throw new JournalReader.DamagedRecordException(file, 0, "the file is empty", true);
        }
        header = JournalHeader.parseFrom(h);
      } catch (JournalReader.DamagedRecordException e) {
        if (isLast && e.tornTail) {
          LOG.warn("Removing journal segment {}: its header was cut short by a crash", file);
          reader.close();
          Files.delete(file);
          segments.values().remove(file);
          return last;
        }
        throw e;
      }
      checkHeader(header, SEGMENT_KIND, file);
      long first = header.getFirstSequence();
      if (first > last + 1) {
        throw new IOException("Journal is missing entries " + (last + 1) + " to " + (first - 1)
            + " before " + file + ": a segment was deleted or the checkpoint is too old. Restore "
            + "the journal folder from a backup.");
      }
      long expected = first;
      while (true) {
        long offset = reader.offset();
        byte[] data;
        try {
          data = reader.next();
        } catch (JournalReader.DamagedRecordException e) {
          if (isLast && e.tornTail) {
            LOG.warn("Dropping the last record of {} at offset {}, cut short by a crash ({})",
                file, e.offset, e.reason);
            reader.close();
            truncate(file, e.offset);
            break;
          }
          throw e;
        }
        if (data == null) {
          break;
        }
        JournalEntry entry;
        try {
          entry = JournalEntry.parseFrom(data);
        } catch (InvalidProtocolBufferException e) {
          throw new IOException("Journal file " + file + " has an unreadable entry at offset "
              + offset + ": " + e.getMessage(), e);
        }
        if (entry.getSequence() != expected) {
          throw new IOException("Journal file " + file + " has entry " + entry.getSequence()
              + " at offset " + offset + " where entry " + expected + " was expected");
        }
        expected++;
        if (entry.getSequence() > last) {
          consumer.accept(entry);
          last = entry.getSequence();
        }
      }
    }
    return last;
  }

  private static void truncate(Path file, long length) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(length);
      ch.force(true);
    }
  }

  /** Fails when a header is of another kind or of a format newer than this release reads. */
  static void checkHeader(JournalHeader header, String kind, Path file) throws IOException {
    if (header.getFormatVersion() > Version.JOURNAL_FORMAT_VERSION) {
      throw new IOException(file + " was written in journal format " + header.getFormatVersion()
          + " by release " + header.getRelease() + ", but this release (" + Version.RELEASE
          + ") reads formats up to " + Version.JOURNAL_FORMAT_VERSION + ". Run release "
          + header.getRelease() + " or newer, or convert the journal with journal-tools.");
    }
    if (!kind.equals(header.getKind())) {
      throw new IOException(file + " is a journal '" + header.getKind() + "' file where a '"
          + kind + "' was expected");
    }
  }

  static JournalHeader header(String kind, long firstSequence) {
    return JournalHeader.newBuilder().setFormatVersion(Version.JOURNAL_FORMAT_VERSION)
        .setRelease(Version.RELEASE).setFirstSequence(firstSequence)
        .setCreatedMs(System.currentTimeMillis()).setKind(kind).build();
  }

  /** Opens a new segment whose first entry will be {@code nextSequence}. */
  public synchronized void startWriting(long nextSequence) throws IOException {
    lastSequence = nextSequence - 1;
    openSegment(nextSequence);
  }

  private void openSegment(long first) throws IOException {
    Path file = dir.resolve(String.format("segment-%020d.log", first));
    // A segment of this name can only be one that holds no entries (replay ended before it).
    Files.deleteIfExists(file);
    FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE);
    byte[] record = record(header(SEGMENT_KIND, first).toByteArray());
    writeFully(ch, record);
    if (fsync) {
      ch.force(true);
      syncDirectory(dir);
    }
    current = ch;
    currentFirst = first;
    currentSize = record.length;
    segments.put(first, file);
  }

  /**
   * Assigns the next sequences to the entries, writes them to the current segment in one write,
   * and returns them as written. Rolls to a new segment first when the current one is full.
   */
  public synchronized List<JournalEntry> append(List<JournalEntry.Builder> builders)
      throws StrataException {
    if (failure != null) {
      throw StrataException.unavailable("The journal in " + dir + " failed earlier ("
          + failure.getMessage() + "); restart the master to recover", failure);
    }
    List<JournalEntry> entries = new ArrayList<>(builders.size());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    long seq = lastSequence;
    for (JournalEntry.Builder b : builders) {
      JournalEntry e = b.setSequence(++seq).build();
      entries.add(e);
      out.writeBytes(record(e.toByteArray()));
    }
    try {
      if (currentSize >= segmentSize) {
        roll();
      }
      byte[] bytes = out.toByteArray();
      writeFully(current, bytes);
      if (fsync) {
        current.force(false);
      }
      currentSize += bytes.length;
    } catch (IOException e) {
      failure = e;
      throw StrataException.unavailable("Cannot write the journal in " + dir + ": "
          + e.getMessage() + " (check free space and permissions; the change was not made)", e);
    }
    lastSequence = seq;
    return entries;
  }

  /** Starts a new segment if the current one holds any entry. */
  public synchronized void roll() throws IOException {
    if (current == null || lastSequence < currentFirst) {
      return;
    }
    closeCurrent();
    openSegment(lastSequence + 1);
  }

  /**
   * Deletes the segments whose every entry has a sequence up to {@code sequence} (they are
   * covered by a checkpoint); never the segment being written. Returns how many were deleted.
   */
  public synchronized int deleteSegmentsCoveredBy(long sequence) throws IOException {
    int deleted = 0;
    List<Long> firsts = new ArrayList<>(segments.keySet());
    for (int i = 0; i + 1 < firsts.size(); i++) {
      long lastInSegment = firsts.get(i + 1) - 1;
      if (firsts.get(i) == currentFirst || lastInSegment > sequence) {
        break;
      }
      Files.deleteIfExists(segments.remove(firsts.get(i)));
      deleted++;
    }
    return deleted;
  }

  public synchronized long lastSequence() {
    return lastSequence;
  }

  private void closeCurrent() throws IOException {
    if (current != null) {
      if (fsync) {
        current.force(true);
      }
      current.close();
      current = null;
    }
  }

  @Override
  public synchronized void close() throws IOException {
    closeCurrent();
  }

  // ---- record format ----

  /** One record: varint32 length, the bytes, their CRC32C big-endian. */
  static byte[] record(byte[] data) {
    int n = CodedOutputStream.computeUInt32SizeNoTag(data.length);
    byte[] out = new byte[n + data.length + 4];
    CodedOutputStream cos = CodedOutputStream.newInstance(out, 0, n);
    try {
      cos.writeUInt32NoTag(data.length);
      cos.flush();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    System.arraycopy(data, 0, out, n, data.length);
    int crc = JournalReader.checksum(data);
    int p = n + data.length;
    out[p] = (byte) (crc >>> 24);
    out[p + 1] = (byte) (crc >>> 16);
    out[p + 2] = (byte) (crc >>> 8);
    out[p + 3] = (byte) crc;
    return out;
  }

  private static void writeFully(FileChannel ch, byte[] bytes) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
  }

  /** Forces a folder's entries (new and renamed files) to the device. */
  static void syncDirectory(Path folder) throws IOException {
    try (FileChannel ch = FileChannel.open(folder, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  /** Writes a one-record header file atomically (temporary file, force, rename, force). */
  static void writeHeaderFile(Path file, JournalHeader header) throws IOException {
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
      writeFully(ch, record(header.toByteArray()));
      ch.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
    syncDirectory(file.getParent());
  }

  /** Reads a one-record header file; fails when it is damaged. */
  static JournalHeader readHeaderFile(Path file) throws IOException {
    try (JournalReader reader = new JournalReader(file)) {
      byte[] data = reader.next();
      if (data == null) {
        throw new IOException("Journal header file " + file + " is empty");
      }
      return JournalHeader.parseFrom(data);
    }
  }
}
