package io.strata.underfs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A status says one consistent thing about an entry, whichever constructor built it. */
class UfsStatusTest {
  @Test
  void theFileOrDirectoryConstructorGivesTheMatchingKindAndNoLinkOrDevice() {
    UfsStatus file = new UfsStatus("f", false, 3, 1, 0644, "o", "g", "3:1");
    assertEquals(UfsFileType.REGULAR, file.type());
    assertTrue(file.regularFile());
    assertEquals("", file.symlinkTarget());
    assertEquals(0, file.rdev());
    UfsStatus dir = new UfsStatus("d", true, 0, 1, 0755, "o", "g", "");
    assertEquals(UfsFileType.DIRECTORY, dir.type());
    assertFalse(dir.regularFile());
  }

  @Test
  void aStatusThatContradictsItselfIsRefused() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new UfsStatus("d", true, 0, 1, 0755, "", "", "", UfsFileType.REGULAR, "", 0));
    assertThrows(
        IllegalArgumentException.class,
        () -> new UfsStatus("l", false, 1, 1, 0777, "", "", "", UfsFileType.DIRECTORY, "", 0));
    assertThrows(
        IllegalArgumentException.class,
        () -> new UfsStatus("f", false, 1, 1, 0644, "", "", "", UfsFileType.REGULAR, "target", 0));
    assertThrows(
        IllegalArgumentException.class,
        () -> new UfsStatus("p", false, 0, 1, 0644, "", "", "", UfsFileType.FIFO, "", 0x103));
    assertThrows(
        NullPointerException.class, () -> new UfsStatus("f", false, 0, 1, 0644, null, "", ""));
    assertThrows(
        NullPointerException.class,
        () -> new UfsStatus("f", false, 0, 1, 0644, "", "", "", null, "", 0));
    UfsStatus device =
        new UfsStatus("null", false, 0, 1, 0666, "", "", "", UfsFileType.CHAR_DEVICE, "", 0x103);
    assertEquals(0x103, device.rdev());
    assertFalse(device.regularFile());
  }
}
