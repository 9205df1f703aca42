package io.strata.proxy.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The streaming multipart/form-data reader, part by part, however the bytes arrive. */
class MultipartFormReaderTest {
  private static final String BOUNDARY = "----WebKitFormBoundary7MA4YWxkTrZu0gW";

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A body of the given fields and a file part last, framed as browsers frame it. */
  private static byte[] form(String boundary, byte[] file, String... fields) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < fields.length; i += 2) {
      out.writeBytes(
          utf8(
              "--"
                  + boundary
                  + "\r\nContent-Disposition: form-data; name=\""
                  + fields[i]
                  + "\"\r\n\r\n"
                  + fields[i + 1]
                  + "\r\n"));
    }
    out.writeBytes(
        utf8(
            "--"
                + boundary
                + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\n"
                + "Content-Type: image/jpeg\r\n\r\n"));
    out.writeBytes(file);
    out.writeBytes(utf8("\r\n--" + boundary + "--\r\n"));
    return out.toByteArray();
  }

  /** A stream that hands out at most {@code max} bytes a read, of varying sizes. */
  private static InputStream trickle(byte[] body, int max, long seed) {
    Random random = new Random(seed);
    return new FilterInputStream(new ByteArrayInputStream(body)) {
      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        return super.read(b, off, Math.min(len, 1 + random.nextInt(max)));
      }
    };
  }

  private static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] b = new byte[777];
    int n;
    while ((n = in.read(b, 0, b.length)) >= 0) {
      out.write(b, 0, n);
    }
    return out.toByteArray();
  }

  @Test
  void readsFieldsThenStreamsTheFile() throws IOException {
    byte[] file = utf8("line one\r\nline two\r\n--not the boundary\r\n");
    byte[] body = form(BOUNDARY, file, "key", "user/${filename}", "acl", "public-read");
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(body), BOUNDARY);
    MultipartFormReader.Part key = r.next();
    assertEquals("key", key.name());
    assertNull(key.filename());
    assertEquals("user/${filename}", key.text(100));
    MultipartFormReader.Part acl = r.next();
    assertEquals("acl", acl.name());
    assertEquals("public-read", acl.text(100));
    MultipartFormReader.Part f = r.next();
    assertEquals("file", f.name());
    assertEquals("photo.jpg", f.filename());
    assertEquals("image/jpeg", f.header("Content-Type"));
    assertArrayEquals(file, readAll(f.content()));
    assertEquals(-1, f.content().read());
    assertNull(r.next());
    assertNull(r.next());
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 7, 50, 4096})
  void aFileArrivingInPiecesOfAnySizeIsReadWhole(int maxRead) throws IOException {
    // Bytes that look like the start of a delimiter, split across reads, stay in the file.
    byte[] file = new byte[300_000];
    new Random(maxRead).nextBytes(file);
    byte[] near = utf8("\r\n--" + BOUNDARY.substring(0, BOUNDARY.length() - 1) + "X");
    System.arraycopy(near, 0, file, 1000, near.length);
    System.arraycopy(near, 0, file, file.length - near.length, near.length);
    byte[] body = form(BOUNDARY, file, "key", "k");
    MultipartFormReader r = new MultipartFormReader(trickle(body, maxRead, maxRead), BOUNDARY);
    assertEquals("k", r.next().text(10));
    MultipartFormReader.Part f = r.next();
    assertArrayEquals(file, readAll(f.content()));
    assertNull(r.next());
  }

  @Test
  void anEmptyFileAndEmptyFieldsAreEmpty() throws IOException {
    byte[] body = form(BOUNDARY, new byte[0], "x-amz-meta-tag", "");
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(body), BOUNDARY);
    assertEquals("", r.next().text(10));
    assertArrayEquals(new byte[0], readAll(r.next().content()));
    assertNull(r.next());
  }

  @Test
  void aPreambleIsSkippedAndUnreadContentIsSkippedByNext() throws IOException {
    byte[] body =
        utf8(
            "This is a preamble\r\n--b\r\nContent-Disposition: form-data; name=a\r\n\r\n"
                + "first value\r\n--b  \r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n"
                + "second\r\n--b--\r\nepilogue");
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(body), "b");
    assertEquals("a", r.next().name());
    MultipartFormReader.Part b = r.next();
    assertEquals("b", b.name());
    assertEquals("second", b.text(100));
    assertNull(r.next());
  }

  @Test
  void headerLinesMayEndInABareLineFeed() throws IOException {
    byte[] body =
        utf8(
            "--b\nContent-Disposition: form-data; name=\"key\"\n\nvalue\r\n--b\n"
                + "Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\n\nabc"
                + "\r\n--b--");
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(body), "b");
    assertEquals("value", r.next().text(100));
    assertEquals("abc", r.next().text(100));
    assertNull(r.next());
  }

  @Test
  void namesAndFileNamesAreReadAsBrowsersAndCurlSendThem() throws IOException {
    byte[] body =
        utf8(
            "--b\r\nContent-Disposition: form-data; name=\"x-amz-meta-\\\"q\\\"\"\r\n\r\n1\r\n"
                + "--b\r\ncontent-disposition: form-data; name=\"file\";"
                + " filename=\"C:\\Users\\me\\été.txt\"\r\n\r\nx\r\n"
                + "--b\r\nContent-Disposition: form-data; name=\"other\";"
                + " filename*=UTF-8''%C3%A9t%C3%A9%20b.txt\r\n\r\ny\r\n--b--\r\n");
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(body), "b");
    assertEquals("x-amz-meta-\"q\"", r.next().name());
    // A Windows path keeps its backslashes; UTF-8 names arrive as UTF-8.
    assertEquals("C:\\Users\\me\\été.txt", r.next().filename());
    assertEquals("été b.txt", r.next().filename());
    assertNull(r.next());
  }

  @Test
  void positionCountsWhatTheFieldsAndTheirFramingTook() throws IOException {
    byte[] body = form(BOUNDARY, utf8("data"), "key", "k");
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(body), BOUNDARY);
    assertEquals(0, r.position());
    r.next().text(10);
    MultipartFormReader.Part f = r.next();
    String before =
        "--"
            + BOUNDARY
            + "\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n--"
            + BOUNDARY
            + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\n"
            + "Content-Type: image/jpeg\r\n\r\n";
    assertEquals(before.length(), r.position());
    readAll(f.content());
    assertTrue(r.drain(1 << 10));
  }

  @Test
  void aFieldLongerThanAllowedIsRefused() throws IOException {
    byte[] body = form(BOUNDARY, utf8("x"), "key", "0123456789");
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(body), BOUNDARY);
    assertThrows(MultipartFormReader.TooLongException.class, () -> r.next().text(9));
    MultipartFormReader r2 = new MultipartFormReader(new ByteArrayInputStream(body), BOUNDARY);
    assertEquals("0123456789", r2.next().text(10));
  }

  @Test
  void aBodyCutShortIsMalformed() throws IOException {
    byte[] body = form(BOUNDARY, utf8("the file's bytes"), "key", "k");
    byte[] cut = java.util.Arrays.copyOf(body, body.length - BOUNDARY.length() - 6);
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(cut), BOUNDARY);
    r.next();
    MultipartFormReader.Part f = r.next();
    assertThrows(MultipartFormReader.MalformedException.class, () -> readAll(f.content()));

    MultipartFormReader none =
        new MultipartFormReader(new ByteArrayInputStream(utf8("no boundary at all")), "b");
    assertThrows(MultipartFormReader.MalformedException.class, none::next);

    MultipartFormReader headers =
        new MultipartFormReader(
            new ByteArrayInputStream(utf8("--b\r\nContent-Disposition: form-data")), "b");
    assertThrows(MultipartFormReader.MalformedException.class, headers::next);
  }

  @Test
  void aPartWithoutAFieldNameIsMalformed() {
    byte[] noDisposition = utf8("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--");
    assertThrows(
        MultipartFormReader.MalformedException.class,
        () -> new MultipartFormReader(new ByteArrayInputStream(noDisposition), "b").next());
    byte[] noName = utf8("--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--");
    assertThrows(
        MultipartFormReader.MalformedException.class,
        () -> new MultipartFormReader(new ByteArrayInputStream(noName), "b").next());
  }

  @Test
  void drainStopsAtItsBound() throws IOException {
    byte[] body = form(BOUNDARY, new byte[100_000], "key", "k");
    MultipartFormReader r = new MultipartFormReader(new ByteArrayInputStream(body), BOUNDARY);
    r.next();
    r.next();
    assertFalse(r.drain(1000));
  }

  @Test
  void theContentTypeNamesTheBoundary() {
    assertTrue(MultipartFormReader.isFormData("multipart/form-data; boundary=abc"));
    assertTrue(MultipartFormReader.isFormData("Multipart/Form-Data;boundary=\"a b\""));
    assertFalse(MultipartFormReader.isFormData("application/x-www-form-urlencoded"));
    assertFalse(MultipartFormReader.isFormData("multipart/mixed; boundary=abc"));
    assertFalse(MultipartFormReader.isFormData(null));
    assertEquals("abc", MultipartFormReader.boundary("multipart/form-data; boundary=abc"));
    assertEquals(
        "a b=c",
        MultipartFormReader.boundary("multipart/form-data; charset=x; boundary=\"a b=c\""));
    assertEquals(
        BOUNDARY, MultipartFormReader.boundary("multipart/form-data;boundary=" + BOUNDARY));
    assertNull(MultipartFormReader.boundary("multipart/form-data"));
    assertNull(MultipartFormReader.boundary("multipart/form-data; boundary="));
    assertNull(MultipartFormReader.boundary("multipart/form-data; boundary=" + "x".repeat(71)));
  }
}
