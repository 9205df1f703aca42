package io.strata.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The listing order is the order of the names' UTF-8 bytes, unsigned: the metastore's. */
class NameOrderTest {
  // ASCII, Latin-1, the private use area just below U+FFFF, and characters beyond U+FFFF.
  private static final int[] CODE_POINTS = {
    'a', 'b', 'Z', '0', '/', '.', 0x7f, 0xe9, 0x7ff, 0x800, 0xe000, 0xfffd, 0x10000, 0x1f600,
    0x10ffff
  };

  private static int bytesOrder(String a, String b) {
    return Arrays.compareUnsigned(
        a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void ordersAsUnsignedUtf8BytesForRandomNames() {
    Random random = new Random(7);
    for (int n = 0; n < 20_000; n++) {
      String a = name(random);
      String b = random.nextInt(4) == 0 ? a + name(random) : name(random);
      assertEquals(
          Integer.signum(bytesOrder(a, b)),
          Integer.signum(NameOrder.compare(a, b)),
          () -> "'" + a + "' against '" + b + "'");
    }
  }

  @Test
  void charactersBeyondTheBasicPlaneComeAfterThePrivateUseArea() {
    String emoji = new String(Character.toChars(0x1f600));
    String privateUse = String.valueOf((char) 0xe000);
    assertTrue(emoji.compareTo(privateUse) < 0, "UTF-16 order puts it first");
    assertTrue(NameOrder.compare(emoji, privateUse) > 0);
    assertTrue(NameOrder.compare("a", "ab") < 0, "a prefix comes first");
    assertEquals(0, NameOrder.compare("same", "same"));
    List<String> sorted = new ArrayList<>(List.of("b", emoji, "é", privateUse, "B", "a"));
    sorted.sort(NameOrder.COMPARATOR);
    assertEquals(List.of("B", "a", "b", "é", privateUse, emoji), sorted);
  }

  private static String name(Random random) {
    StringBuilder s = new StringBuilder();
    int length = random.nextInt(5);
    for (int i = 0; i < length; i++) {
      s.appendCodePoint(CODE_POINTS[random.nextInt(CODE_POINTS.length)]);
    }
    return s.toString();
  }
}
