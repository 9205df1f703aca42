package io.strata.bench;

import java.util.ArrayList;
import java.util.List;

/** A plain-text table with aligned columns, printed at the end of each benchmark. */
final class Table {
  private final List<String[]> rows = new ArrayList<>();

  Table(String... header) {
    rows.add(header);
  }

  void row(Object... cells) {
    String[] r = new String[cells.length];
    for (int i = 0; i < cells.length; i++) {
      r[i] = String.valueOf(cells[i]);
    }
    rows.add(r);
  }

  String render() {
    int cols = rows.get(0).length;
    int[] width = new int[cols];
    for (String[] r : rows) {
      for (int i = 0; i < cols; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (int k = 0; k < rows.size(); k++) {
      String[] r = rows.get(k);
      out.append('|');
      for (int i = 0; i < cols; i++) {
        out.append(' ').append(pad(r[i], width[i], i > 0)).append(" |");
      }
      out.append('\n');
      if (k == 0) {
        out.append('|');
        for (int i = 0; i < cols; i++) {
          out.append(' ').append("-".repeat(width[i])).append(" |");
        }
        out.append('\n');
      }
    }
    return out.toString();
  }

  private static String pad(String s, int w, boolean right) {
    String fill = " ".repeat(w - s.length());
    return right ? fill + s : s + fill;
  }

  static String f1(double v) {
    return String.format("%.1f", v);
  }

  static String f2(double v) {
    return String.format("%.2f", v);
  }
}
