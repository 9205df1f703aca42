package io.strata.proxy.xml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.io.ByteArrayOutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.utils.http.SdkHttpUtils;

class KeyEncodingTest {
  /** A strict RFC 3986 decoder: '+' stays '+'. */
  private static String percentDecode(String s) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
        i += 2;
      } else {
        out.write(c);
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void encodesAllButUnreservedCharactersAndSlash() {
    assertEquals(
        "photos/2006/a%20b%2Bc%25d%26e%3Df%3Fg%23h%28i%29~-_.",
        KeyEncoding.urlEncode("photos/2006/a b+c%d&e=f?g#h(i)~-_."));
    assertEquals("%ED%95%9C%EA%B8%80/x.txt", KeyEncoding.urlEncode("\ud55c\uae00/x.txt"));
    assertEquals("%01%0A%0D%09%7F", KeyEncoding.urlEncode("\u0001\n\r\t\u007f"));
    assertEquals("%3C%21%5BCDATA%5B...%5D%5D%3E", KeyEncoding.urlEncode("<![CDATA[...]]>"));
    assertEquals("plain/key.txt", KeyEncoding.urlEncode("plain/key.txt"));
  }

  @Test
  void everyClientDecoderGetsTheKeyBack() {
    Random random = new Random(1);
    for (int n = 0; n < 2000; n++) {
      StringBuilder key = new StringBuilder();
      for (int i = 0; i < 20; i++) {
        int cp =
            switch (random.nextInt(4)) {
              case 0 -> random.nextInt(0x80);
              case 1 -> " +%/&=?".charAt(random.nextInt(7));
              case 2 -> 0x80 + random.nextInt(0xD000);
              default -> 0x1F600 + random.nextInt(50);
            };
        key.appendCodePoint(cp);
      }
      String k = key.toString();
      String encoded = KeyEncoding.urlEncode(k);
      // The AWS SDKs and boto3 decode as forms ('+' is a space), others strictly.
      assertEquals(k, SdkHttpUtils.urlDecode(encoded));
      assertEquals(k, URLDecoder.decode(encoded, StandardCharsets.UTF_8));
      assertEquals(k, percentDecode(encoded));
      assertFalse(encoded.chars().anyMatch(c -> c < 0x21 || c > 0x7e), encoded);
    }
  }

  @Test
  void acceptsOnlyTheUrlEncodingType() {
    assertFalse(KeyEncoding.isUrlEncoding(null));
    assertTrue(KeyEncoding.isUrlEncoding("url"));
    S3Exception e = assertThrows(S3Exception.class, () -> KeyEncoding.isUrlEncoding("base64"));
    assertEquals(S3ErrorCode.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().startsWith("Invalid Encoding Method specified in Request"));
  }
}
