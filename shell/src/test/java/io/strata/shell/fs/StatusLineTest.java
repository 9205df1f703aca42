package io.strata.shell.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StatusLineTest {
  private static final String NL = System.lineSeparator();
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
  private final AtomicLong clock = new AtomicLong();

  private String text() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void plainLinesArePrintedAtMostEveryTwoSeconds() {
    StatusLine line = new StatusLine(err, false, 0, clock::get);
    line.show("a");
    clock.set(1_000_000_000L);
    line.show("b");
    clock.set(2_000_000_000L);
    line.show("c");
    clock.set(3_999_999_999L);
    line.show("d");
    clock.set(4_000_000_000L);
    line.show("e");
    line.note("note");
    line.finish();
    assertEquals("a" + NL + "c" + NL + "e" + NL + "note" + NL, text());
  }

  @Test
  void aTerminalLineIsRedrawnInPlaceAndNotesGoAboveIt() {
    StatusLine line = new StatusLine(err, true, 0, clock::get);
    line.show("long line");
    line.show("short");
    line.note("master gone");
    line.show("back");
    line.finish();
    assertEquals(
        "\rlong line"
            + "\rshort    "
            + "\r     \r"
            + "master gone"
            + NL
            + "\rshort"
            + "\rback "
            + NL,
        text());
  }

  @Test
  void aTerminalLineIsCutToTheTerminalsWidth() {
    StatusLine line = new StatusLine(err, true, 8, clock::get);
    line.show("0123456789");
    assertEquals("\r0123456", text());
    assertEquals(80, StatusLine.columns(" 80 "));
    assertEquals(0, StatusLine.columns(null));
    assertEquals(0, StatusLine.columns("wide"));
  }
}
