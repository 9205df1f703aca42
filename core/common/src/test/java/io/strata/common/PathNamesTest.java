package io.strata.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import org.junit.jupiter.api.Test;

class PathNamesTest {
  @Test
  void normalizeFoldsSlashes() throws Exception {
    assertEquals("/", PathNames.normalize("/"));
    assertEquals("/", PathNames.normalize("//"));
    assertEquals("/a/b", PathNames.normalize("/a//b/"));
    assertEquals("/a b/ünï €", PathNames.normalize("/a b/ünï €"));
  }

  @Test
  void relativeAndDotPathsAreRefusedWithTheirReason() {
    StrataException e = assertThrows(StrataException.class, () -> PathNames.normalize("a/b"));
    assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("not absolute"));
    assertThrows(StrataException.class, () -> PathNames.normalize("/a/../b"));
    assertThrows(StrataException.class, () -> PathNames.normalize(""));
  }

  @Test
  void parentNameAndJoin() {
    assertNull(PathNames.parent("/"));
    assertEquals("/", PathNames.parent("/a"));
    assertEquals("/a", PathNames.parent("/a/b"));
    assertEquals("b", PathNames.name("/a/b"));
    assertEquals("/a/b", PathNames.join("/a", "b"));
    assertEquals("/b", PathNames.join("/", "b"));
    assertTrue(PathNames.isUnder("/a/b", "/a"));
    assertFalse(PathNames.isUnder("/ab", "/a"));
  }
}
