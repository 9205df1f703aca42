package io.strata.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.strata.common.metrics.MetricNames;
import io.strata.server.common.ProcessMetricsRegistry;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The Grafana dashboard and the Prometheus rules under docker/ select only metrics the processes
 * publish: each name is in docs/metrics.md (a timer's or histogram's series by their suffixes),
 * each strata_ name is declared in {@link MetricNames}, and each jvm_ and process_ name is one the
 * processes' registry ({@link ProcessMetricsRegistry}) prints. A misspelt name fails with the name
 * and the file. The files are also checked for what an operator needs of them: titled panels,
 * alerts with a severity, a summary and a description, and job names the sample scrape
 * configuration has.
 */
class MonitoringFilesTest {
  private static final Path ROOT = DeploymentTools.repositoryRoot();
  private static final String DASHBOARD = "docker/grafana/strata-dashboard.json";
  private static final String RULES = "docker/prometheus/strata-alerts.yaml";
  private static final String SCRAPE = "docker/prometheus/prometheus.yaml";
  private static final String DOC = "docs/metrics.md";

  /** Series Micrometer prints for a timer besides its quantiles (a summary and a gauge). */
  private static final List<String> TIMER_SUFFIXES = List.of("_count", "_sum", "_max");

  /** Series a histogram adds. No process publishes one yet; the doc would say "histogram". */
  private static final List<String> HISTOGRAM_SUFFIXES =
      List.of("_count", "_sum", "_max", "_bucket");

  private static final Pattern BACKTICKED = Pattern.compile("`([a-z_][a-z0-9_]*)`");
  private static final Pattern JOB = Pattern.compile("\\bjob\\s*=~?\\s*\"([^\"]*)\"");

  // ------------------------------------------------------------------ names

  @Test
  void everyMetricTheDashboardSelectsIsDocumented() throws IOException {
    assertKnown(DASHBOARD, dashboardQueries(), documented(), Set.of());
  }

  @Test
  void everyMetricTheRulesSelectIsDocumented() throws IOException {
    Set<String> recorded = new TreeSet<>();
    for (Map<String, Object> rule : rules()) {
      if (rule.get("record") != null) {
        recorded.add(rule.get("record").toString());
      }
    }
    assertKnown(RULES, ruleExprs(), documented(), recorded);
  }

  @Test
  void aMisspeltMetricIsReportedWithItsFile() throws IOException {
    List<String> problems =
        unknown(
            DASHBOARD,
            List.of(
                "sum(rate(strata_worker_cache_hit_total{job=\"strata-worker\"}[5m]))",
                "strata_fuse_upcall_seconds_bucket",
                "strata_worker_tier_used_bytes_count",
                "sum by (job) (up) + strata_master_workers",
                "vector(1)"),
            documented(),
            Set.of());
    assertEquals(4, problems.size(), problems.toString());
    assertTrue(
        problems.get(0).startsWith(DASHBOARD + ": strata_worker_cache_hit_total "),
        problems.get(0));
    // A timer publishes no buckets, and a gauge no timer series.
    assertTrue(problems.get(1).contains("strata_fuse_upcall_seconds_bucket"), problems.get(1));
    assertTrue(problems.get(2).contains("strata_worker_tier_used_bytes_count"), problems.get(2));
    assertEquals(DASHBOARD + ": no metric found in `vector(1)`", problems.get(3));
  }

  @Test
  void everyStrataMetricTheFilesSelectIsDeclaredInMetricNames() throws Exception {
    Set<String> declared = declaredInMetricNames();
    Map<String, MetricDoc> docs = documented();
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, Set<String>> e : namesByFile().entrySet()) {
      for (String name : e.getValue()) {
        // An undocumented name is the other checks' to report.
        String base = baseOf(name, docs);
        if (name.startsWith("strata_") && base != null && !declared(base, declared)) {
          problems.add(
              e.getKey()
                  + ": "
                  + name
                  + " is documented but no constant of "
                  + "io.strata.common.metrics.MetricNames names it");
        }
      }
    }
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  @Test
  void everyJvmAndProcessMetricTheFilesSelectIsOneTheProcessesPrint() throws IOException {
    PrometheusMeterRegistry registry = ProcessMetricsRegistry.create();
    Set<String> printed = new TreeSet<>();
    for (String line : registry.scrape().split("\n")) {
      if (!line.isBlank() && !line.startsWith("#")) {
        printed.add(line.split("[{ ]", 2)[0]);
      }
    }
    registry.close();
    List<String> problems = new ArrayList<>();
    int checked = 0;
    for (Map.Entry<String, Set<String>> e : namesByFile().entrySet()) {
      for (String name : e.getValue()) {
        if (name.startsWith("jvm_") || name.startsWith("process_")) {
          checked++;
          if (!printed.contains(name)) {
            problems.add(
                e.getKey()
                    + ": "
                    + name
                    + " is not a series the processes' registry"
                    + " (ProcessMetricsRegistry) prints "
                    + printed);
          }
        }
      }
    }
    assertTrue(checked > 0, "the files watch no JVM memory");
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  @Test
  void promQlNamesAreTheSeriesNotTheFunctionsLabelsOrVariables() {
    assertEquals(
        List.of("a_total", "b_seconds_count"),
        List.copyOf(
            PromQlNames.of(
                "sum by (instance, job) (rate(a_total{job=~\"x|y\", id!='z'}[$__rate_interval]))"
                    + " / on (instance) group_left (tier) max without (le) (b_seconds_count offset 5m)"
                    + " > bool 0.5 and vector(1e3)")));
    assertEquals(
        List.of("c", "d", "e", "up"),
        List.copyOf(
            PromQlNames.of(
                "predict_linear(min_over_time(sum(c{area=\"heap\"})[30m:1m])[6h:5m], 4 * 3600)"
                    + " > 0.9 * clamp_min(d, 0) unless label_replace(e, \"a\", \"$1\", \"b\", \"(.*)\")"
                    + " or up == ${x} or Inf")));
    assertEquals(
        List.of("f"),
        List.copyOf(
            PromQlNames.of(PromQlNames.ofVariable("label_values(f{job=\"a,b\"}, instance)"))));
    assertEquals(Set.of(), PromQlNames.of(PromQlNames.ofVariable("label_values(instance)")));
  }

  // ------------------------------------------------------------------ shape

  @Test
  void everyPanelHasATitleAndEveryGraphAQuery() throws IOException {
    JsonNode dashboard = dashboard();
    List<JsonNode> panels = panels(dashboard.path("panels"));
    assertTrue(panels.size() > 10, "too few panels: " + panels.size());
    Set<Integer> ids = new LinkedHashSet<>();
    for (JsonNode panel : panels) {
      String where = DASHBOARD + " panel " + panel.path("id");
      assertFalse(panel.path("title").asText().isBlank(), where + " has no title");
      assertTrue(ids.add(panel.path("id").asInt()), where + ": its id is taken");
      if (!panel.path("type").asText().equals("row")) {
        assertFalse(panel.path("targets").isEmpty(), where + " queries nothing");
        for (JsonNode target : panel.path("targets")) {
          assertFalse(target.path("expr").asText().isBlank(), where + " has an empty query");
          assertEquals(
              "${datasource}",
              target.path("datasource").path("uid").asText(),
              where + " does not query the dashboard's data source");
        }
      }
    }
  }

  @Test
  void theDashboardChoosesItsPrometheusSource() throws IOException {
    JsonNode dashboard = dashboard();
    assertTrue(dashboard.path("schemaVersion").asInt() >= 39, "schemaVersion");
    assertFalse(dashboard.path("uid").asText().isBlank(), "uid");
    JsonNode source = null;
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      if (variable.path("name").asText().equals("datasource")) {
        source = variable;
      }
    }
    assertTrue(source != null, DASHBOARD + " has no datasource variable");
    assertEquals("datasource", source.path("type").asText());
    assertEquals("prometheus", source.path("query").asText());
  }

  @Test
  void everyAlertTellsItsSeverityAndWhatToDo() throws IOException {
    Object parsed = load(RULES);
    assertTrue(
        parsed instanceof Map<?, ?> m && m.get("groups") instanceof List<?>,
        RULES + " has no groups");
    Set<String> groups = new TreeSet<>();
    Set<String> alerts = new TreeSet<>();
    for (Object g : (List<?>) ((Map<?, ?>) parsed).get("groups")) {
      Map<?, ?> group = (Map<?, ?>) g;
      assertTrue(groups.add(String.valueOf(group.get("name"))), "group " + group.get("name"));
      assertTrue(
          group.get("rules") instanceof List<?> l && !l.isEmpty(),
          RULES + ": group " + group.get("name") + " has no rules");
    }
    for (Map<String, Object> rule : rules()) {
      if (rule.get("record") != null) {
        continue;
      }
      String where = RULES + ": alert " + rule.get("alert");
      assertTrue(
          rule.get("alert") instanceof String, RULES + ": a rule is neither alert nor record");
      assertTrue(alerts.add((String) rule.get("alert")), where + " is named twice");
      assertTrue(rule.get("for") != null, where + " has no `for`");
      Map<?, ?> labels = (Map<?, ?>) rule.getOrDefault("labels", Map.of());
      assertTrue(
          Set.of("critical", "warning", "info").contains(labels.get("severity")),
          where + " has no severity of critical, warning or info: " + labels.get("severity"));
      Map<?, ?> annotations = (Map<?, ?>) rule.getOrDefault("annotations", Map.of());
      for (String key : List.of("summary", "description")) {
        assertTrue(
            annotations.get(key) instanceof String s && !s.isBlank(), where + " has no " + key);
      }
    }
    assertTrue(alerts.size() >= 5, "too few alerts: " + alerts);
  }

  @Test
  void theScrapeConfigurationHasEveryJobTheFilesSelectAndLoadsTheRules() throws IOException {
    Map<?, ?> scrape = (Map<?, ?>) load(SCRAPE);
    Set<String> jobs = new TreeSet<>();
    for (Object c : (List<?>) scrape.get("scrape_configs")) {
      jobs.add(String.valueOf(((Map<?, ?>) c).get("job_name")));
    }
    assertEquals(Set.of("strata-master", "strata-worker", "strata-proxy", "strata-fuse"), jobs);
    assertEquals(List.of(Path.of(RULES).getFileName().toString()), scrape.get("rule_files"));
    List<String> exprs = new ArrayList<>(dashboardQueries());
    exprs.addAll(ruleExprs());
    for (String expr : exprs) {
      Matcher m = JOB.matcher(expr);
      while (m.find()) {
        for (String job : m.group(1).split("\\|")) {
          assertTrue(jobs.contains(job), "job " + job + " of `" + expr + "` is not in " + SCRAPE);
        }
      }
    }
  }

  // ------------------------------------------------------------------ helpers

  /** What docs/metrics.md says of one name: only the type matters here. */
  private record MetricDoc(String name, List<String> suffixes) {}

  /**
   * The names docs/metrics.md documents: every strata_ name in its tables, with the series suffixes
   * of those whose row says timer, summary or histogram, and every jvm_ and process_ name it lists.
   */
  private static Map<String, MetricDoc> documented() throws IOException {
    Map<String, MetricDoc> names = new LinkedHashMap<>();
    for (String line : Files.readAllLines(ROOT.resolve(DOC))) {
      boolean row = line.startsWith("|");
      String[] cells = line.split("\\|");
      // The type column of the metric tables, the second; other tables hold no strata_ name there.
      String type = row && cells.length > 2 ? cells[2].toLowerCase(Locale.ROOT) : "";
      List<String> suffixes =
          type.contains("histogram")
              ? HISTOGRAM_SUFFIXES
              : type.contains("timer") || type.contains("summary") ? TIMER_SUFFIXES : List.of();
      Matcher m = BACKTICKED.matcher(line);
      while (m.find()) {
        String name = m.group(1);
        // Suffixes belong to the name a row is about (its first cell), not to names it cites.
        boolean described = row && cells.length > 1 && cells[1].contains("`" + name + "`");
        if ((row && name.startsWith("strata_"))
            || name.startsWith("jvm_")
            || name.startsWith("process_")) {
          names.merge(
              name,
              new MetricDoc(name, described ? suffixes : List.of()),
              (a, b) -> a.suffixes().size() >= b.suffixes().size() ? a : b);
        }
      }
    }
    assertTrue(names.size() > 50, DOC + " documents too few metrics: " + names.keySet());
    return names;
  }

  /** Every query of the dashboard: panel targets (rows' panels too) and query variables. */
  private static List<String> dashboardQueries() throws IOException {
    JsonNode dashboard = dashboard();
    List<String> exprs = new ArrayList<>();
    for (JsonNode panel : panels(dashboard.path("panels"))) {
      for (JsonNode target : panel.path("targets")) {
        exprs.add(target.path("expr").asText());
      }
    }
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      if (variable.path("type").asText().equals("query")) {
        JsonNode query = variable.path("query");
        exprs.add(
            PromQlNames.ofVariable((query.isObject() ? query.path("query") : query).asText()));
      }
    }
    return exprs;
  }

  private static Map<String, Set<String>> namesByFile() throws IOException {
    Map<String, Set<String>> byFile = new LinkedHashMap<>();
    Set<String> dashboard = new TreeSet<>();
    dashboardQueries().forEach(q -> dashboard.addAll(PromQlNames.of(q)));
    byFile.put(DASHBOARD, dashboard);
    Set<String> rules = new TreeSet<>();
    ruleExprs().forEach(e -> rules.addAll(PromQlNames.of(e)));
    byFile.put(RULES, rules);
    return byFile;
  }

  private static void assertKnown(
      String file, List<String> exprs, Map<String, MetricDoc> docs, Set<String> recorded) {
    List<String> problems = unknown(file, exprs, docs, recorded);
    assertTrue(problems.isEmpty(), String.join("\n", problems));
  }

  /**
   * One line per name of {@code exprs} that no process publishes, naming it and the file, and per
   * expression in which no name is found (a query of nothing, or names this check missed).
   */
  private static List<String> unknown(
      String file, List<String> exprs, Map<String, MetricDoc> docs, Set<String> recorded) {
    List<String> problems = new ArrayList<>();
    for (String expr : exprs) {
      Set<String> names = PromQlNames.of(expr);
      if (names.isEmpty() && !expr.isBlank()) {
        problems.add(file + ": no metric found in `" + expr + "`");
      }
      for (String name : names) {
        if (!name.equals("up") && !recorded.contains(name) && baseOf(name, docs) == null) {
          problems.add(
              file + ": " + name + " is not a metric " + DOC + " documents (in `" + expr + "`)");
        }
      }
    }
    return problems;
  }

  /** The documented name whose series {@code name} is, or null. */
  private static String baseOf(String name, Map<String, MetricDoc> docs) {
    if (docs.containsKey(name)) {
      return name;
    }
    for (MetricDoc doc : docs.values()) {
      for (String suffix : doc.suffixes()) {
        if (name.equals(doc.name() + suffix)) {
          return doc.name();
        }
      }
    }
    return null;
  }

  /**
   * The Prometheus names of {@link MetricNames}' meters without Micrometer's unit and counter
   * suffixes: dots turned to underscores, and each buffer pool meter under its owner's prefix.
   */
  private static Set<String> declaredInMetricNames() throws IllegalAccessException {
    List<String> names = new ArrayList<>();
    List<String> poolPrefixes = new ArrayList<>();
    List<String> poolMeters = new ArrayList<>();
    for (Field f : MetricNames.class.getFields()) {
      if (!Modifier.isStatic(f.getModifiers())
          || f.getType() != String.class
          || f.getName().startsWith("TAG_")) {
        continue;
      }
      String value = (String) f.get(null);
      if (f.getName().startsWith("BUFFER_POOL_")) {
        poolMeters.add(value);
      } else if (f.getName().endsWith("_BUFFER_POOL")) {
        poolPrefixes.add(value);
      } else {
        names.add(value);
      }
    }
    for (String prefix : poolPrefixes) {
      poolMeters.forEach(meter -> names.add(prefix + "." + meter));
    }
    Set<String> declared = new TreeSet<>();
    names.forEach(n -> declared.add(n.replace('.', '_')));
    return declared;
  }

  /**
   * Whether a Prometheus name is a declared meter's, past the suffixes Micrometer adds: a timer's
   * series, `_total` of a counter, and the base unit.
   */
  private static boolean declared(String prometheusName, Set<String> declared) {
    String name =
        prometheusName.replaceFirst("_(count|sum|max|bucket)$", "").replaceFirst("_total$", "");
    return declared.contains(name) || declared.contains(name.replaceFirst("_(bytes|seconds)$", ""));
  }

  private static JsonNode dashboard() throws IOException {
    return new ObjectMapper().readTree(ROOT.resolve(DASHBOARD).toFile());
  }

  /** Panels at every depth: a collapsed row keeps its panels inside it. */
  private static List<JsonNode> panels(JsonNode list) {
    List<JsonNode> all = new ArrayList<>();
    for (JsonNode panel : list) {
      all.add(panel);
      all.addAll(panels(panel.path("panels")));
    }
    return all;
  }

  private static Object load(String file) throws IOException {
    return new Yaml().load(Files.readString(ROOT.resolve(file)));
  }

  private static List<String> ruleExprs() throws IOException {
    List<String> exprs = new ArrayList<>();
    for (Map<String, Object> rule : rules()) {
      exprs.add(String.valueOf(rule.get("expr")));
    }
    return exprs;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> rules() throws IOException {
    List<Map<String, Object>> rules = new ArrayList<>();
    for (Object group : (List<?>) ((Map<?, ?>) load(RULES)).get("groups")) {
      rules.addAll((List<Map<String, Object>>) ((Map<?, ?>) group).get("rules"));
    }
    return rules;
  }
}
