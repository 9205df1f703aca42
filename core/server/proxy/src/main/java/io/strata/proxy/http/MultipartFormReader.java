package io.strata.proxy.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A {@code multipart/form-data} body (RFC 7578) read part by part from a blocking stream, each
 * part's content itself a stream that ends at the next boundary: a form's small fields are read
 * into memory by the caller, within bounds it chooses, and its file is copied on as it arrives,
 * never held whole.
 *
 * <p>Why not Netty's {@code HttpPostMultipartRequestDecoder}: it is fed {@code HttpContent} pieces
 * on the event loop and hands each part over only once that part is complete, keeping a file part
 * in memory or in a temporary disk file ({@code HttpDataFactory}) until then. The proxy's request
 * bodies are blocking streams read by the request's own thread ({@link RequestBody}), which reads
 * the socket only when the handler wants more; a reader over that stream keeps the back-pressure
 * every other upload has, holds one buffer of the file at a time, and lets the caller stop reading
 * (a policy refusal, a size limit) without the rest of the body being decoded anywhere.
 *
 * <p>The body is taken as RFC 2046 frames it: an optional preamble, then parts each introduced by
 * {@code CRLF--boundary} (the first one may start the body without the CRLF) followed by optional
 * whitespace and CRLF, the part's headers up to an empty line, and its content up to the next
 * delimiter; {@code --} after a delimiter closes the body. Lines of the headers may end in a bare
 * LF, as some clients send them. Header text is read as UTF-8, which is what browsers send for
 * non-ASCII field names and file names.
 *
 * <p>Not thread-safe: one body, one thread.
 */
public final class MultipartFormReader {
  /** The longest boundary RFC 2046 allows. */
  static final int MAX_BOUNDARY = 70;

  /** The most header bytes one part may have. */
  static final int MAX_PART_HEADER_BYTES = 16 << 10;

  private static final int BUFFER = 64 << 10;

  private final InputStream in;

  /** {@code CRLF--boundary}. */
  private final byte[] delimiter;

  private final byte[] buf;
  private int pos;
  private int limit;
  private boolean eof;

  /** Bytes of the stream consumed so far, before {@link #pos}. */
  private long consumed;

  /** Whether the closing delimiter was read. */
  private boolean closed;

  /** Whether the preamble was skipped. */
  private boolean started;

  /** The part whose content is being read, or null. */
  private Part current;

  /** A body that is not the {@code multipart/form-data} it claims to be. */
  public static class MalformedException extends IOException {
    private static final long serialVersionUID = 1L;

    MalformedException(String message) {
      super(message);
    }
  }

  /** A part longer than its reader allowed ({@link Part#text}). */
  public static final class TooLongException extends MalformedException {
    private static final long serialVersionUID = 1L;

    TooLongException(String message) {
      super(message);
    }
  }

  /**
   * @param boundary the boundary of the body's Content-Type ({@link #boundary(String)})
   */
  public MultipartFormReader(InputStream in, String boundary) {
    if (boundary.isEmpty() || boundary.length() > MAX_BOUNDARY) {
      throw new IllegalArgumentException(
          "A boundary has 1 to " + MAX_BOUNDARY + " characters: '" + boundary + "'");
    }
    this.in = in;
    this.delimiter = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
    this.buf = new byte[BUFFER];
    // The body is read as if a CRLF preceded it, so that a first delimiter at its very start is
    // found like any other; the two bytes are not counted as consumed.
    buf[0] = '\r';
    buf[1] = '\n';
    this.limit = 2;
    this.consumed = -2;
  }

  /**
   * Whether a Content-Type names {@code multipart/form-data} (any case, any parameters).
   *
   * @param contentType the header's value; null for none
   */
  public static boolean isFormData(String contentType) {
    if (contentType == null) {
      return false;
    }
    int semi = contentType.indexOf(';');
    String type = (semi < 0 ? contentType : contentType.substring(0, semi)).trim();
    return type.equalsIgnoreCase("multipart/form-data");
  }

  /**
   * The {@code boundary} parameter of a multipart Content-Type, unquoted; null when it has none or
   * one RFC 2046 does not allow (empty, or longer than 70 characters).
   */
  public static String boundary(String contentType) {
    Map<String, String> params = parameters(contentType);
    String b = params.get("boundary");
    if (b == null || b.isEmpty() || b.length() > MAX_BOUNDARY) {
      return null;
    }
    return b;
  }

  /**
   * Bytes of the body consumed so far: what the parts read so far, their headers and delimiters
   * took, and what is buffered ahead of the current position does not count.
   */
  public long position() {
    // Before the first read, the CRLF put in front of the body is not the body's.
    return Math.max(0, consumed + pos);
  }

  /**
   * The next part, or null after the closing delimiter. What is left of the previous part's content
   * is skipped.
   *
   * @throws MalformedException when the body ends before its closing delimiter, or a part's headers
   *     are not what RFC 7578 makes them
   */
  public Part next() throws IOException {
    if (current != null) {
      current.skip();
      current = null;
    } else if (!started) {
      // The preamble, up to the first delimiter.
      skipToDelimiter();
    }
    started = true;
    if (closed) {
      return null;
    }
    // After a delimiter: "--" closes the body; else optional whitespace and a line end.
    if (!ensure(2)) {
      throw new MalformedException("The body ends after a boundary, without its closing '--'");
    }
    if (buf[pos] == '-' && buf[pos + 1] == '-') {
      pos += 2;
      closed = true;
      return null;
    }
    while (true) {
      if (!ensure(1)) {
        throw new MalformedException("The body ends after a boundary");
      }
      byte c = buf[pos];
      if (c == ' ' || c == '\t') {
        pos++;
        continue;
      }
      if (c == '\r' && ensure(2) && buf[pos + 1] == '\n') {
        pos += 2;
        break;
      }
      if (c == '\n') {
        pos++;
        break;
      }
      throw new MalformedException("A boundary is followed by something other than a line end");
    }
    current = new Part(readHeaders(), this);
    return current;
  }

  /**
   * Reads and drops what is left of the body, at most {@code maxBytes} of it, without parsing it
   * (the fields after a form's file, which S3 ignores), so that the connection can serve another
   * request.
   *
   * @return whether the body's end was reached
   */
  public boolean drain(long maxBytes) throws IOException {
    long left = maxBytes - (limit - pos);
    pos = limit;
    if (eof) {
      return true;
    }
    byte[] scratch = new byte[8192];
    while (left >= 0) {
      int n = in.read(scratch, 0, (int) Math.min(scratch.length, left + 1));
      if (n < 0) {
        eof = true;
        return true;
      }
      left -= n;
    }
    return false;
  }

  /** The headers of a part, names in lower case, up to the empty line that ends them. */
  private Map<String, String> readHeaders() throws IOException {
    Map<String, String> headers = new LinkedHashMap<>();
    int total = 0;
    String last = null;
    while (true) {
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      while (true) {
        if (!ensure(1)) {
          throw new MalformedException("The body ends inside a part's headers");
        }
        byte c = buf[pos++];
        if (++total > MAX_PART_HEADER_BYTES) {
          throw new MalformedException(
              "A part's headers are longer than " + MAX_PART_HEADER_BYTES + " bytes");
        }
        if (c == '\n') {
          break;
        }
        line.write(c);
      }
      byte[] bytes = line.toByteArray();
      int n = bytes.length;
      if (n > 0 && bytes[n - 1] == '\r') {
        n--;
      }
      if (n == 0) {
        return headers;
      }
      String text = new String(bytes, 0, n, StandardCharsets.UTF_8);
      if ((text.charAt(0) == ' ' || text.charAt(0) == '\t') && last != null) {
        // An obsolete folded line continues the header before it.
        headers.put(last, headers.get(last) + " " + text.trim());
        continue;
      }
      int colon = text.indexOf(':');
      if (colon <= 0) {
        throw new MalformedException("A part's header line has no name: '" + text + "'");
      }
      last = text.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      headers.merge(last, text.substring(colon + 1).trim(), (a, b) -> a + ", " + b);
    }
  }

  /** Skips bytes up to and including the next delimiter (the preamble). */
  private void skipToDelimiter() throws IOException {
    byte[] scratch = new byte[8192];
    while (readContent(scratch, 0, scratch.length) >= 0) {
      // Dropped.
    }
  }

  /**
   * Reads content up to the next delimiter; -1 once the delimiter is reached, which is then
   * consumed.
   */
  private int readContent(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    while (true) {
      int found = indexOfDelimiter();
      if (found == pos) {
        pos += delimiter.length;
        return -1;
      }
      int available;
      if (found >= 0) {
        available = found - pos;
      } else {
        // The last delimiter.length - 1 bytes may be the start of a delimiter: kept back.
        available = limit - pos - (delimiter.length - 1);
      }
      if (available > 0) {
        int n = Math.min(len, available);
        System.arraycopy(buf, pos, b, off, n);
        pos += n;
        return n;
      }
      if (!fill()) {
        throw new MalformedException("The body ends inside a part, before its closing boundary");
      }
    }
  }

  /** The index of the delimiter in the buffered bytes from {@link #pos}, or -1. */
  private int indexOfDelimiter() {
    int last = limit - delimiter.length;
    byte first = delimiter[0];
    outer:
    for (int i = pos; i <= last; i++) {
      if (buf[i] != first) {
        continue;
      }
      for (int j = 1; j < delimiter.length; j++) {
        if (buf[i + j] != delimiter[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /** Whether at least {@code n} bytes are buffered from {@link #pos}, reading as needed. */
  private boolean ensure(int n) throws IOException {
    while (limit - pos < n) {
      if (!fill()) {
        return false;
      }
    }
    return true;
  }

  /** Reads more of the stream into the buffer, compacting it first; false at its end. */
  private boolean fill() throws IOException {
    if (eof) {
      return false;
    }
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, limit - pos);
      consumed += pos;
      limit -= pos;
      pos = 0;
    }
    if (limit == buf.length) {
      // Cannot happen: the buffer is far larger than a delimiter or anything kept back.
      throw new IllegalStateException("multipart buffer full");
    }
    int n = in.read(buf, limit, buf.length - limit);
    if (n < 0) {
      eof = true;
      return false;
    }
    limit += n;
    return true;
  }

  /**
   * Parameters of a header value such as {@code form-data; name="a"; filename="b"}: names in lower
   * case, quoted values unquoted (a backslash escapes the next character).
   */
  static Map<String, String> parameters(String value) {
    Map<String, String> out = new LinkedHashMap<>();
    if (value == null) {
      return out;
    }
    int i = value.indexOf(';');
    if (i < 0) {
      return out;
    }
    i++;
    int n = value.length();
    while (i < n) {
      while (i < n
          && (value.charAt(i) == ' ' || value.charAt(i) == '\t' || value.charAt(i) == ';')) {
        i++;
      }
      int eq = value.indexOf('=', i);
      int semi = value.indexOf(';', i);
      if (eq < 0 || (semi >= 0 && semi < eq)) {
        // A parameter without a value: skipped.
        i = semi < 0 ? n : semi + 1;
        continue;
      }
      String name = value.substring(i, eq).trim().toLowerCase(Locale.ROOT);
      i = eq + 1;
      while (i < n && (value.charAt(i) == ' ' || value.charAt(i) == '\t')) {
        i++;
      }
      StringBuilder v = new StringBuilder();
      if (i < n && value.charAt(i) == '"') {
        i++;
        while (i < n && value.charAt(i) != '"') {
          char c = value.charAt(i);
          if (c == '\\' && i + 1 < n && value.charAt(i + 1) == '"') {
            // Only an escaped quote: browsers send a Windows path's backslashes as they are.
            i++;
            c = '"';
          }
          v.append(c);
          i++;
        }
        i++;
        int next = value.indexOf(';', Math.min(i, n));
        i = next < 0 ? n : next + 1;
      } else {
        int end = semi < 0 ? n : semi;
        v.append(value, i, end);
        i = end + 1;
      }
      out.putIfAbsent(name, v.toString().trim());
    }
    return out;
  }

  /** One part of the form: its headers, and its content as a stream up to the next boundary. */
  public static final class Part {
    private final Map<String, String> headers;
    private final MultipartFormReader reader;
    private final String name;
    private final String filename;
    private boolean ended;
    private final InputStream content =
        new InputStream() {
          @Override
          public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            if (ended) {
              return -1;
            }
            if (reader.current != Part.this) {
              throw new IOException("the form has moved on to its next part");
            }
            int n = reader.readContent(b, off, len);
            if (n < 0) {
              ended = true;
            }
            return n;
          }
        };

    Part(Map<String, String> headers, MultipartFormReader reader) throws MalformedException {
      this.headers = headers;
      this.reader = reader;
      String disposition = headers.get("content-disposition");
      if (disposition == null) {
        throw new MalformedException("A part has no Content-Disposition header");
      }
      Map<String, String> params = parameters(disposition);
      this.name = params.get("name");
      if (name == null) {
        throw new MalformedException(
            "A part's Content-Disposition names no field: '" + disposition + "'");
      }
      String extended = params.get("filename*");
      this.filename = extended != null ? decodeExtended(extended) : params.get("filename");
    }

    /** The field's name, as the form spells it. */
    public String name() {
      return name;
    }

    /**
     * The file name the part carries ({@code filename}, or {@code filename*} in RFC 5987 form), as
     * sent, path and all; null when it has none (a plain field).
     */
    public String filename() {
      return filename;
    }

    /** A header of the part, by name in any case; null when absent. */
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }

    /** The part's content, up to the next boundary. */
    public InputStream content() {
      return content;
    }

    /**
     * The part's content whole, as UTF-8 text.
     *
     * @param maxBytes the most bytes the content may have
     * @throws TooLongException when it has more
     */
    public String text(int maxBytes) throws IOException {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] b = new byte[Math.max(1, Math.min(8192, maxBytes + 1))];
      int n;
      while ((n = content.read(b, 0, b.length)) >= 0) {
        if (out.size() + n > maxBytes) {
          throw new TooLongException(
              "The field '" + name + "' is longer than the " + maxBytes + " bytes it may have");
        }
        out.write(b, 0, n);
      }
      return out.toString(StandardCharsets.UTF_8);
    }

    private void skip() throws IOException {
      byte[] scratch = new byte[8192];
      while (content.read(scratch, 0, scratch.length) >= 0) {
        // Dropped.
      }
    }

    /** An RFC 5987 value, {@code charset'language'percent-encoded}; as given when not one. */
    private static String decodeExtended(String v) {
      int a = v.indexOf('\'');
      int b = a < 0 ? -1 : v.indexOf('\'', a + 1);
      if (b < 0) {
        return v;
      }
      String charset = v.substring(0, a);
      String encoded = v.substring(b + 1);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (int i = 0; i < encoded.length(); i++) {
        char c = encoded.charAt(i);
        if (c == '%' && i + 2 < encoded.length()) {
          int hi = Character.digit(encoded.charAt(i + 1), 16);
          int lo = Character.digit(encoded.charAt(i + 2), 16);
          if (hi >= 0 && lo >= 0) {
            out.write(hi * 16 + lo);
            i += 2;
            continue;
          }
        }
        out.write(c & 0xff);
      }
      try {
        return out.toString(java.nio.charset.Charset.forName(charset));
      } catch (IllegalArgumentException e) {
        return out.toString(StandardCharsets.UTF_8);
      }
    }
  }
}
