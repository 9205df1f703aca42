package io.strata.shell.admin;

import io.strata.shell.UsageException;
import java.io.PrintStream;
import java.util.List;

/** How the journal commands print masters: one table, the same for every command. */
final class QuorumTable {
  private QuorumTable() {}

  /**
   * Prints address, journal address, role, applied index and lag, one master a row, columns as wide
   * as their widest value; an unknown number prints as "-".
   */
  static void print(PrintStream out, List<QuorumSurvey.Row> rows) {
    int address = "ADDRESS".length();
    int journal = "JOURNAL ADDRESS".length();
    int role = "ROLE".length();
    int applied = "APPLIED".length();
    for (QuorumSurvey.Row r : rows) {
      address = Math.max(address, r.address().length());
      journal = Math.max(journal, r.journalAddress().length());
      role = Math.max(role, r.role().length());
      applied = Math.max(applied, number(r.applied()).length());
    }
    String line =
        "  %-" + address + "s  %-" + journal + "s  %-" + role + "s  %" + applied + "s  %5s%n";
    out.printf(line, "ADDRESS", "JOURNAL ADDRESS", "ROLE", "APPLIED", "LAG");
    for (QuorumSurvey.Row r : rows) {
      out.printf(
          line, r.address(), r.journalAddress(), r.role(), number(r.applied()), number(r.lag()));
    }
  }

  private static String number(long n) {
    return n < 0 ? "-" : Long.toString(n);
  }

  /**
   * {@code value} when it is host:port with a port from 1 to 65535; otherwise a usage error naming
   * {@code what} (exit code 2).
   */
  static String hostPort(String value, String what) {
    String v = value.trim();
    int colon = v.lastIndexOf(':');
    boolean ok = colon > 0 && colon < v.length() - 1;
    if (ok) {
      try {
        int port = Integer.parseInt(v.substring(colon + 1));
        ok = port > 0 && port < 65536;
      } catch (NumberFormatException e) {
        ok = false;
      }
    }
    if (!ok) {
      throw new UsageException(what + " must be host:port (e.g. m2:19200), not '" + value + "'");
    }
    return v;
  }
}
