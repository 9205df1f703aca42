package io.strata.journal;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs a {@code strata journal} command line in this JVM and keeps what it printed. */
record Tool(int code, String out, String err) {
  static Tool run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = JournalToolsMain.run(new PrintWriter(out), new PrintWriter(err), false, args);
    return new Tool(code, out.toString(), err.toString());
  }

  @Override
  public String toString() {
    return "exit " + code + "\n--- out\n" + out + "--- err\n" + err;
  }
}
