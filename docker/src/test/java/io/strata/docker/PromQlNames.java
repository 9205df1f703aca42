package io.strata.docker;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression selects, as far as a dashboard or a rule file needs: every
 * identifier that is not a function call, a keyword, a label name or a Grafana variable.
 *
 * <p>Written by hand rather than with a parser because no PromQL parser exists for Java short of
 * embedding another language's, and the expressions checked here are ours: selectors, function
 * calls, aggregations with {@code by}/{@code without}, binary operators with {@code on} and {@code
 * group_left}, ranges and subqueries. An expression outside that shape may yield a word that is no
 * metric; the check that uses this then fails and names it, which is the safe side.
 */
final class PromQlNames {
  private PromQlNames() {}

  // Removed before names are looked for: nothing inside them names a metric. Grafana variables
  // come first because ${name} would otherwise read as a label matcher.
  private static final Pattern STRING =
      Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`");
  private static final Pattern VARIABLE = Pattern.compile("\\$\\{[^}]*}|\\$\\w+");
  private static final Pattern MATCHERS = Pattern.compile("\\{[^}]*}");
  private static final Pattern RANGE = Pattern.compile("\\[[^]]*]");
  private static final Pattern LABEL_LIST =
      Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
  // A number (durations such as 5m and 1e3 included) is consumed whole, so that its letters are
  // not read as an identifier.
  private static final Pattern TOKEN =
      Pattern.compile("[0-9][0-9a-zA-Z_.]*|([a-zA-Z_:][a-zA-Z0-9_:]*)");

  /** Words that may stand without a following parenthesis and are not metrics. */
  private static final Set<String> KEYWORDS =
      Set.of(
          "and",
          "or",
          "unless",
          "bool",
          "offset",
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "atan2",
          "inf",
          "nan",
          "le",
          "quantile");

  // Greedy up to the last comma: the label is the last argument, and a matcher may hold commas.
  private static final Pattern LABEL_VALUES =
      Pattern.compile(
          "^\\s*label_values\\s*\\((.*),\\s*[a-zA-Z_][a-zA-Z0-9_]*\\s*\\)\\s*$", Pattern.DOTALL);
  private static final Pattern LABEL_VALUES_OF_ALL =
      Pattern.compile("^\\s*label_values\\s*\\(\\s*[a-zA-Z_][a-zA-Z0-9_]*\\s*\\)\\s*$");
  private static final Pattern QUERY_RESULT =
      Pattern.compile("^\\s*query_result\\s*\\((.*)\\)\\s*$", Pattern.DOTALL);

  /** The metric names {@code expr} selects, in the order they first appear. */
  static Set<String> of(String expr) {
    String s = STRING.matcher(expr).replaceAll(" ");
    s = VARIABLE.matcher(s).replaceAll(" ");
    s = MATCHERS.matcher(s).replaceAll(" ");
    s = RANGE.matcher(s).replaceAll(" ");
    s = LABEL_LIST.matcher(s).replaceAll(" ");
    Set<String> names = new LinkedHashSet<>();
    Matcher m = TOKEN.matcher(s);
    while (m.find()) {
      String word = m.group(1);
      if (word == null || KEYWORDS.contains(word.toLowerCase(Locale.ROOT)) || calls(s, m.end())) {
        continue;
      }
      names.add(word);
    }
    return names;
  }

  /**
   * The PromQL expression of a Grafana query variable: {@code label_values(expr, label)} and {@code
   * query_result(expr)} select with their expression, {@code label_values(label)} with none (an
   * empty one).
   */
  static String ofVariable(String query) {
    if (LABEL_VALUES_OF_ALL.matcher(query).matches()) {
      return "";
    }
    Matcher values = LABEL_VALUES.matcher(query);
    if (values.matches()) {
      return values.group(1);
    }
    Matcher result = QUERY_RESULT.matcher(query);
    return result.matches() ? result.group(1) : query;
  }

  /** Whether the word ending at {@code end} is a function or aggregation: a '(' follows. */
  private static boolean calls(String s, int end) {
    int i = end;
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
    return i < s.length() && s.charAt(i) == '(';
  }
}
