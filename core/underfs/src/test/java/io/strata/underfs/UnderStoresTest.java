package io.strata.underfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class UnderStoresTest {
  @Test
  void namesThatAreNotLegalInJavaUrisStillParse() {
    UnderStores.Location l = UnderStores.parse("file:///data/with space/#hash/50%/[1]");
    assertEquals("file", l.scheme());
    assertEquals("", l.authority());
    assertEquals("bucket", UnderStores.parse("s3://bucket/a b/c").authority());
  }

  @Test
  void aUriWithoutSchemeOrWithAnUnknownOneIsRefusedWithTheFix() throws Exception {
    try (UnderStores stores = new UnderStores()) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> stores.get("/data/x"));
      assertTrue(e.getMessage().contains("file:///data"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> stores.get("nosuch://x/y"));
      assertTrue(
          e.getMessage().contains("nosuch") && e.getMessage().contains("file"), e.getMessage());
    }
  }

  @Test
  void oneStoreIsSharedPerSchemeAuthorityAndOptions() throws Exception {
    try (UnderStores stores = new UnderStores()) {
      assertSame(stores.get("file:///a"), stores.get("file:///b/c d"));
      assertThrows(
          IllegalArgumentException.class, () -> stores.get("file:///a", Map.of("unknown", "1")));
    }
  }

  @Test
  void joinAddsOneSeparator() {
    assertEquals("file:///a/b", UnderStores.join("file:///a", "b"));
    assertEquals("file:///a/b", UnderStores.join("file:///a/", "b"));
    assertEquals("file:///a", UnderStores.join("file:///a", ""));
  }
}
