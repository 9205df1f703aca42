package io.strata.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.docker.DeploymentTools.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The deployment files, checked offline with the real tools: the Helm chart {@code
 * docker/helm/strata} is linted, rendered with its default values and with {@code
 * ci/all-on-values.yaml}, and each rendering is validated against the Kubernetes 1.30 schemas by
 * kubernetes-validate and read for what a working cluster depends on; the compose file {@code
 * docker/compose.yaml} is loaded by compose-go, the loader behind {@code docker compose config}
 * (docker/tools/compose-config), and read the same way. Nothing is installed or started. The tools
 * are those {@code bin/setup} installs ({@link DeploymentTools}); a missing tool fails the test.
 */
class DeploymentFilesTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String KUBERNETES = "1.30.0";
  private static final String RELEASE = "ml";
  private static final String NAMESPACE = "training";

  private static Path repo;
  private static Path chart;

  @TempDir Path dir;

  @BeforeAll
  static void locate() {
    repo = DeploymentTools.repositoryRoot();
    chart = repo.resolve("docker/helm/strata");
  }

  @Test
  void chartPassesHelmLintStrictWithEveryValuesFile() throws Exception {
    run(helm(), "lint", chart.toString());
    run(helm(), "lint", "--strict", chart.toString());
    run(helm(), "lint", "--strict", chart.toString(), "-f", allOnValues().toString());
    run(helm(), "lint", "--strict", chart.toString(), "-f", sharedFolderValues().toString());
  }

  @Test
  void defaultRenderingIsValidAndNamesEveryMasterEverywhere() throws Exception {
    List<Map<String, Object>> docs = renderAndValidate();
    String prefix = RELEASE + "-strata";
    String headless = prefix + "-master-headless";
    String addresses = masterAddresses(prefix, headless, 3, "cluster.local");

    Map<String, Object> masters = find(docs, "StatefulSet", prefix + "-master");
    Map<String, Object> spec = map(masters, "spec");
    assertEquals(3, spec.get("replicas"));
    assertEquals("Parallel", spec.get("podManagementPolicy"));
    assertEquals(headless, spec.get("serviceName"));
    assertEquals(0, map(spec, "updateStrategy", "rollingUpdate").get("partition"));
    Map<String, Object> master = container(masters, "master");
    assertEquals(List.of("master", "start"), master.get("args"));
    // Pod i of the StatefulSet finds itself as entry i of strata.master.addresses.
    String[] entries = addresses.split(",");
    for (int i = 0; i < entries.length; i++) {
      assertEquals(
          entries[i],
          env(master, "STRATA_MASTER_HOSTNAME").replace("$(POD_NAME)", prefix + "-master-" + i)
              + ":19200");
    }
    assertHealthProbes(master, "web", 19201);
    assertTrue(
        String.valueOf(map(master, "lifecycle", "preStop", "exec").get("command"))
            .contains("quorum elect"),
        "a stopping leader hands the lead over first");
    long grace =
        ((Number) map(spec, "template", "spec").get("terminationGracePeriodSeconds")).longValue();
    assertTrue(grace >= 60, "masters need time for the snapshot on SIGTERM: " + grace);
    assertEquals("/var/lib/strata", mountPath(master, "data"));
    assertEquals("data", map(list(spec, "volumeClaimTemplates").get(0), "metadata").get("name"));

    Map<String, Object> headlessService = find(docs, "Service", headless);
    assertEquals("None", map(headlessService, "spec").get("clusterIP"));
    assertEquals(true, map(headlessService, "spec").get("publishNotReadyAddresses"));
    assertEquals(
        1,
        map(find(docs, "PodDisruptionBudget", prefix + "-master"), "spec").get("maxUnavailable"));

    // Every container of every Strata workload finds the same three masters.
    List<Map<String, Object>> strataContainers = strataContainers(docs);
    assertTrue(strataContainers.size() >= 5, "master, worker, fuse, proxy, test pod");
    for (Map<String, Object> c : strataContainers) {
      assertEquals(addresses, env(c, "STRATA_MASTER_ADDRESSES"), "container " + c.get("name"));
    }

    Map<String, Object> workers = find(docs, "StatefulSet", prefix + "-worker");
    Map<String, Object> worker = container(workers, "worker");
    assertEquals(2, map(workers, "spec").get("replicas"));
    assertEquals("2GB", env(worker, "STRATA_WORKER_TIER_MEM_CAPACITY"));
    assertEquals("20GB", env(worker, "STRATA_WORKER_TIER_SSD_CAPACITY"));
    assertEquals("/var/lib/strata/mem", env(worker, "STRATA_WORKER_TIER_MEM_DIR"));
    assertEquals(
        "status.podIP",
        map(envEntry(worker, "STRATA_WORKER_HOSTNAME"), "valueFrom", "fieldRef").get("fieldPath"));
    assertHealthProbes(worker, "web", 19302);
    Map<String, Object> mem = volume(workers, "mem");
    assertEquals(Map.of("medium", "Memory", "sizeLimit", "2Gi"), mem.get("emptyDir"));
    assertEquals("/var/lib/strata/mem", mountPath(worker, "mem"));
    assertEquals(
        "ssd",
        map(list(map(workers, "spec"), "volumeClaimTemplates").get(0), "metadata").get("name"));
    assertTrue(
        ((Number) map(workers, "spec", "template", "spec").get("terminationGracePeriodSeconds"))
                .intValue()
            > 10,
        "workers drain for up to strata.worker.drain.timeout (10 s) on SIGTERM");
    assertEquals(1, map(workers, "spec", "updateStrategy", "rollingUpdate").get("maxUnavailable"));

    Map<String, Object> fuse = find(docs, "DaemonSet", prefix + "-fuse");
    assertFuseMount(fuse, "/mnt/strata");
    assertEquals("OnDelete", map(fuse, "spec", "updateStrategy").get("type"));

    Map<String, Object> proxyService = find(docs, "Service", prefix + "-proxy");
    Map<String, Object> s3 = list(map(proxyService, "spec"), "ports").get(0);
    assertEquals("s3", s3.get("name"));
    assertEquals(19400, s3.get("port"));
    assertHealthProbes(
        container(find(docs, "Deployment", prefix + "-proxy"), "proxy"), "web", 19401);
    assertFalse(docs.stream().anyMatch(d -> "Job".equals(d.get("kind"))), "no load job");
  }

  @Test
  void allOptionsRenderingIsValid() throws Exception {
    List<Map<String, Object>> docs = renderAndValidate("-f", allOnValues().toString());
    String prefix = RELEASE + "-strata";
    String addresses = masterAddresses(prefix, prefix + "-master-headless", 5, "k8s.example");
    for (Map<String, Object> c : strataContainers(docs)) {
      assertEquals(addresses, env(c, "STRATA_MASTER_ADDRESSES"), "container " + c.get("name"));
    }
    Map<String, Object> masters = find(docs, "StatefulSet", prefix + "-master");
    assertEquals(4, map(masters, "spec", "updateStrategy", "rollingUpdate").get("partition"));
    Map<String, Object> master = container(masters, "master");
    assertEquals("s3://training-data/strata", env(master, "STRATA_MASTER_ROOT_UFS"));
    assertEquals(
        "s3.endpoint=http://minio.storage.svc:9000,s3.path.style=true",
        env(master, "STRATA_MASTER_ROOT_UFS_OPTIONS"));
    assertEquals("true", env(master, "STRATA_MASTER_JOURNAL_FSYNC"));
    assertEquals("90s", env(master, "STRATA_CLIENT_RPC_TIMEOUT"));
    assertTrue(env(master, "STRATA_MASTER_JAVA_OPTS").contains("-Xmx4g"));
    assertEquals(
        "strata-s3",
        map(envEntry(master, "AWS_SECRET_ACCESS_KEY"), "valueFrom", "secretKeyRef").get("name"));

    // An upgrade moves the masters to a new release before anything else.
    assertEquals("strata/strata:0.2.1", master.get("image"));
    Map<String, Object> workers = find(docs, "DaemonSet", prefix + "-worker");
    assertEquals("strata/strata:0.2.0-rc1", container(workers, "worker").get("image"));
    assertEquals(
        Map.of("medium", "Memory", "sizeLimit", "9Gi"), volume(workers, "mem").get("emptyDir"));
    assertEquals("/mnt/nvme/strata", map(volume(workers, "ssd"), "hostPath").get("path"));
    assertEquals(
        "ssd-owner",
        list(map(workers, "spec", "template", "spec"), "initContainers").get(0).get("name"));
    assertEquals("8GB", env(container(workers, "worker"), "STRATA_WORKER_TIER_MEM_CAPACITY"));

    Map<String, Object> fuse = find(docs, "DaemonSet", prefix + "-fuse");
    assertFuseMount(fuse, "/mnt/datasets");
    assertEquals("RollingUpdate", map(fuse, "spec", "updateStrategy").get("type"));
    List<?> fuseArgs = (List<?>) container(fuse, "fuse").get("args");
    assertEquals(
        List.of(
            "fuse",
            "mount",
            "/strata-host/datasets",
            "-f",
            "-o",
            "allow_other,ro,max_read=1048576",
            "--path",
            "/datasets"),
        fuseArgs);

    Map<String, Object> credentials =
        map(volume(find(docs, "Deployment", prefix + "-proxy"), "credentials"), "secret");
    assertEquals("strata-proxy-keys", credentials.get("secretName"));
    assertEquals(0600, credentials.get("defaultMode"));

    List<Map<String, Object>> jobs =
        docs.stream().filter(d -> "Job".equals(d.get("kind"))).collect(Collectors.toList());
    assertEquals(2, jobs.size());
    assertEquals(
        List.of("fs", "load", "--verify", "/datasets/imagenet"),
        container(jobs.get(0), "load").get("args"));
  }

  @Test
  void sharedFolderRenderingIsValid() throws Exception {
    List<Map<String, Object>> docs = renderAndValidate("-f", sharedFolderValues().toString());
    String prefix = RELEASE + "-strata";
    String addresses = masterAddresses(prefix, prefix + "-master-headless", 1, "cluster.local");
    List<Map<String, Object>> containers = strataContainers(docs);
    assertEquals(2, containers.size(), "a master and a worker, nothing else");
    for (Map<String, Object> c : containers) {
      assertEquals(addresses, env(c, "STRATA_MASTER_ADDRESSES"), "container " + c.get("name"));
      assertEquals("/data", mountPath(c, "under-store"), "the shared folder in every pod");
    }
    Map<String, Object> masters = find(docs, "StatefulSet", prefix + "-master");
    assertEquals(
        "file:///data/datasets", env(container(masters, "master"), "STRATA_MASTER_ROOT_UFS"));
    assertEquals(
        "shared-datasets",
        map(volume(masters, "under-store"), "persistentVolumeClaim").get("claimName"));
    Map<String, Object> workers = find(docs, "StatefulSet", prefix + "-worker");
    assertFalse(
        list(podSpec(workers), "volumes").stream().anyMatch(v -> "mem".equals(v.get("name"))),
        "no memory tier volume when the tier is off");
    assertEquals(Map.of("sizeLimit", "50Gi"), volume(workers, "ssd").get("emptyDir"));
    assertFalse(map(workers, "spec").containsKey("volumeClaimTemplates"));
  }

  @Test
  void statefulSetWorkersKeepANodeFolderOfTheirOwn() throws Exception {
    List<Map<String, Object>> docs = renderAndValidate("--set", "worker.tiers.ssd.type=hostPath");
    Map<String, Object> workers = find(docs, "StatefulSet", RELEASE + "-strata-worker");
    Map<String, Object> owner = list(podSpec(workers), "initContainers").get(0);
    for (Map<String, Object> c : List.of(owner, container(workers, "worker"))) {
      Map<String, Object> ssd =
          list(c, "volumeMounts").stream()
              .filter(m -> "ssd".equals(m.get("name")))
              .findFirst()
              .orElseThrow();
      assertEquals("$(POD_NAME)", ssd.get("subPathExpr"), c.get("name") + "");
      assertEquals(
          "metadata.name",
          map(envEntry(c, "POD_NAME"), "valueFrom", "fieldRef").get("fieldPath"),
          "the variable subPathExpr names is set in " + c.get("name"));
    }
    assertEquals("/var/lib/strata/worker-ssd", map(volume(workers, "ssd"), "hostPath").get("path"));
  }

  @Test
  void serviceMonitorSelectsAServiceOfEveryProcess() throws Exception {
    // The Prometheus Operator's schema is not Kubernetes': this rendering is read, not validated.
    List<Map<String, Object>> docs =
        load(
            run(
                    helm(),
                    "template",
                    RELEASE,
                    chart.toString(),
                    "--namespace",
                    NAMESPACE,
                    "--set",
                    "metrics.serviceMonitor.enabled=true")
                .stdout());
    Map<String, Object> monitor = find(docs, "ServiceMonitor", RELEASE + "-strata-metrics");
    Map<String, Object> selector = map(monitor, "spec", "selector", "matchLabels");
    assertEquals("web", list(map(monitor, "spec"), "endpoints").get(0).get("port"));
    List<String> selected =
        docs.stream()
            .filter(
                d ->
                    "Service".equals(d.get("kind"))
                        && map(d, "metadata", "labels").entrySet().containsAll(selector.entrySet()))
            .map(d -> (String) map(d, "metadata").get("name"))
            .sorted()
            .collect(Collectors.toList());
    String prefix = RELEASE + "-strata-";
    assertEquals(
        List.of(prefix + "fuse", prefix + "master-headless", prefix + "proxy", prefix + "worker"),
        selected);
    for (String name : selected) {
      assertTrue(
          list(map(find(docs, "Service", name), "spec"), "ports").stream()
              .anyMatch(p -> "web".equals(p.get("name"))),
          name + " has a web port");
    }
  }

  @Test
  void chartRefusesValuesThatCannotWork() throws Exception {
    assertRefused("worker.kind=Deployment", "use StatefulSet or DaemonSet");
    assertRefused("master.replicas=2", "master.replicas must be odd");
    assertRefused("worker.kind=DaemonSet", "needs worker.kind StatefulSet");
    assertRefused("fuse.hostPath=/strata", "at least two levels deep");
  }

  /** Rendering with {@code value} set fails, saying {@code why}. */
  private void assertRefused(String value, String why) throws Exception {
    Run r = runAllowingFailure(helm(), "template", RELEASE, chart.toString(), "--set", value);
    assertNotEquals(0, r.exit(), value + " was accepted");
    assertTrue(r.output().contains(why), value + ": " + r.output());
  }

  @Test
  void validatorRejectsAnUnknownField() throws Exception {
    // The schema check is strict: a misspelt field fails it rather than being dropped.
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(
        bad,
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\n"
            + "spec:\n  selector: {matchLabels: {a: b}}\n  template:\n"
            + "    metadata: {labels: {a: b}}\n    spec:\n      containers:\n"
            + "        - name: c\n          image: i\n          mountPropagaton: Bidirectional\n");
    Run r = runAllowingFailure(validator(), "--strict", "-k", KUBERNETES, bad.toString());
    assertNotEquals(0, r.exit(), r.output());
    assertTrue(r.output().contains("mountPropagaton"), r.output());
  }

  @Test
  void composeFileIsValidAndHoldsTheWholeCluster() throws Exception {
    Path compose = repo.resolve("docker/compose.yaml");
    assertFalse(
        load(Files.readString(compose)).get(0).containsKey("version"),
        "the Compose Specification has no version key");
    Path data = Files.createDirectories(dir.resolve("data"));
    List<String> env = List.of("STRATA_DATA_DIR=" + data, "STRATA_MOUNT_DIR=" + dir);
    runWithEnv(env, compose(), "-f", compose.toString(), "-q");
    Map<String, Object> config =
        load(runWithEnv(env, compose(), "-f", compose.toString()).stdout()).get(0);
    Map<String, Object> services = map(config, "services");
    for (String name :
        List.of("master-1", "master-2", "master-3", "worker-1", "worker-2", "proxy", "fuse")) {
      assertTrue(services.containsKey(name), "service " + name);
    }
    String addresses = "master-1:19200,master-2:19200,master-3:19200";
    int[] webPorts = {19201, 19201, 19201, 19302, 19302, 19401, 19501};
    String[] names = {"master-1", "master-2", "master-3", "worker-1", "worker-2", "proxy", "fuse"};
    for (int i = 0; i < names.length; i++) {
      Map<String, Object> s = map(services, names[i]);
      assertEquals(addresses, map(s, "environment").get("STRATA_MASTER_ADDRESSES"), names[i]);
      assertEquals(
          List.of("CMD", "curl", "-fsS", "http://127.0.0.1:" + webPorts[i] + "/health"),
          map(s, "healthcheck").get("test"),
          names[i]);
      for (Map<String, Object> port : list(s, "ports")) {
        assertEquals("127.0.0.1", port.get("host_ip"), names[i] + " publishes on loopback only");
      }
      assertTrue(String.valueOf(s.get("image")).startsWith("strata/strata:"), names[i]);
    }
    for (int i = 1; i <= 3; i++) {
      Map<String, Object> m = map(services, "master-" + i);
      assertEquals("master-" + i, map(m, "environment").get("STRATA_MASTER_HOSTNAME"));
      assertEquals("file:///data", map(m, "environment").get("STRATA_MASTER_ROOT_UFS"));
      assertEquals("master-" + i, volumeSource(m, "/var/lib/strata"), "a volume of its own");
    }
    for (String w : List.of("worker-1", "worker-2")) {
      assertEquals(
          "service_healthy", map(map(services, w), "depends_on", "master-1").get("condition"));
      assertTrue(
          list(map(services, w), "volumes").stream()
              .anyMatch(
                  v ->
                      "tmpfs".equals(v.get("type"))
                          && "/var/lib/strata/mem".equals(v.get("target"))),
          "memory tier");
    }
    Map<String, Object> fuse = map(services, "fuse");
    assertEquals(List.of("SYS_ADMIN"), fuse.get("cap_add"));
    assertTrue(String.valueOf(fuse.get("devices")).contains("/dev/fuse"), "/dev/fuse");
    Map<String, Object> point =
        list(fuse, "volumes").stream()
            .filter(v -> "/mnt/strata".equals(v.get("target")))
            .findFirst()
            .orElseThrow();
    assertEquals("rshared", map(point, "bind").get("propagation"));
    assertEquals("service_healthy", map(fuse, "depends_on", "worker-1").get("condition"));
  }

  // ---- rendering and validation ------------------------------------------------------------

  /** Renders the chart, validates every document and returns them parsed. */
  private List<Map<String, Object>> renderAndValidate(String... extra) throws Exception {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                helm().toString(),
                "template",
                RELEASE,
                chart.toString(),
                "--namespace",
                NAMESPACE));
    cmd.addAll(Arrays.asList(extra));
    String rendered = run(cmd).stdout();
    Path file = dir.resolve("rendered.yaml");
    Files.writeString(file, rendered);
    Run check = run(validator().toString(), "--strict", "-k", KUBERNETES, file.toString());
    List<Map<String, Object>> docs = load(rendered);
    // kubernetes-validate says "passed" once per resource it checked: none was skipped.
    assertEquals(
        docs.size(),
        check.output().lines().filter(l -> l.contains(" passed ")).count(),
        check.output());
    return docs;
  }

  private static String masterAddresses(String prefix, String headless, int n, String domain) {
    return IntStream.range(0, n)
        .mapToObj(
            i ->
                prefix
                    + "-master-"
                    + i
                    + "."
                    + headless
                    + "."
                    + NAMESPACE
                    + ".svc."
                    + domain
                    + ":19200")
        .collect(Collectors.joining(","));
  }

  private static void assertFuseMount(Map<String, Object> daemonSet, String hostPath) {
    Map<String, Object> fuse = container(daemonSet, "fuse");
    Map<String, Object> security = map(fuse, "securityContext");
    assertEquals(true, security.get("privileged"));
    assertEquals(0, security.get("runAsUser"));
    // The pod shares the mount point's parent with the node and mounts below it, so the mount
    // appears on the node at hostPath.
    Path node = Path.of(hostPath);
    String point = "/strata-host/" + node.getFileName();
    Map<String, Object> parent =
        list(fuse, "volumeMounts").stream()
            .filter(m -> "mount-point".equals(m.get("name")))
            .findFirst()
            .orElseThrow();
    assertEquals("/strata-host", parent.get("mountPath"));
    assertEquals("Bidirectional", parent.get("mountPropagation"));
    assertEquals(
        node.getParent().toString(), map(volume(daemonSet, "mount-point"), "hostPath").get("path"));
    assertEquals(point, ((List<?>) fuse.get("args")).get(2));
    assertEquals("/dev/fuse", map(volume(daemonSet, "dev-fuse"), "hostPath").get("path"));
    assertTrue(
        String.valueOf(map(fuse, "lifecycle", "preStop", "exec").get("command"))
            .contains("fusermount -u " + point),
        "unmounts before stopping");
    assertHealthProbes(fuse, "web", 19501);
  }

  private static void assertHealthProbes(Map<String, Object> container, String port, int number) {
    for (String probe : List.of("readinessProbe", "livenessProbe")) {
      Map<String, Object> get = map(container, probe, "httpGet");
      assertEquals("/health", get.get("path"), probe);
      assertEquals(port, get.get("port"), probe);
    }
    assertTrue(
        list(container, "ports").stream()
            .anyMatch(
                p ->
                    port.equals(p.get("name"))
                        && Integer.valueOf(number).equals(p.get("containerPort"))),
        port + " is " + number);
  }

  /** Containers running the Strata image, in every workload and pod. */
  private static List<Map<String, Object>> strataContainers(List<Map<String, Object>> docs) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Map<String, Object> d : docs) {
      Map<String, Object> podSpec = podSpec(d);
      if (podSpec == null) {
        continue;
      }
      for (Map<String, Object> c : list(podSpec, "containers")) {
        if (String.valueOf(c.get("image")).startsWith("strata/strata:")) {
          out.add(c);
        }
      }
    }
    return out;
  }

  private static Map<String, Object> podSpec(Map<String, Object> doc) {
    switch (String.valueOf(doc.get("kind"))) {
      case "Pod":
        return map(doc, "spec");
      case "StatefulSet":
      case "DaemonSet":
      case "Deployment":
      case "Job":
        return map(doc, "spec", "template", "spec");
      default:
        return null;
    }
  }

  private static Map<String, Object> find(
      List<Map<String, Object>> docs, String kind, String name) {
    return docs.stream()
        .filter(d -> kind.equals(d.get("kind")) && name.equals(map(d, "metadata").get("name")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " in the rendering"));
  }

  private static Map<String, Object> container(Map<String, Object> workload, String name) {
    return list(podSpec(workload), "containers").stream()
        .filter(c -> name.equals(c.get("name")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container " + name));
  }

  private static Map<String, Object> volume(Map<String, Object> workload, String name) {
    return list(podSpec(workload), "volumes").stream()
        .filter(v -> name.equals(v.get("name")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volume " + name));
  }

  private static String mountPath(Map<String, Object> container, String volume) {
    return list(container, "volumeMounts").stream()
        .filter(m -> volume.equals(m.get("name")))
        .map(m -> (String) m.get("mountPath"))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no mount of " + volume));
  }

  private static Map<String, Object> envEntry(Map<String, Object> container, String name) {
    return list(container, "env").stream()
        .filter(e -> name.equals(e.get("name")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " in " + container.get("name")));
  }

  private static String env(Map<String, Object> container, String name) {
    return (String) envEntry(container, name).get("value");
  }

  private static String volumeSource(Map<String, Object> service, String target) {
    return list(service, "volumes").stream()
        .filter(v -> target.equals(v.get("target")))
        .map(v -> (String) v.get("source"))
        .findFirst()
        .orElse(null);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Map<String, Object> m, String... path) {
    Map<String, Object> cur = m;
    for (String key : path) {
      Object next = cur.get(key);
      assertNotNull(next, "missing " + key + " in " + cur.keySet());
      cur = (Map<String, Object>) next;
    }
    return cur;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> m, String key) {
    Object v = m.get(key);
    assertNotNull(v, "missing " + key + " in " + m.keySet());
    return (List<Map<String, Object>>) v;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> load(String yaml) {
    List<Map<String, Object>> docs = new ArrayList<>();
    for (Object d : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml)) {
      if (d != null) {
        docs.add((Map<String, Object>) d);
      }
    }
    return docs;
  }

  // ---- tools and processes ------------------------------------------------------------------

  private static Path allOnValues() {
    return chart.resolve("ci/all-on-values.yaml");
  }

  private static Path sharedFolderValues() {
    return chart.resolve("ci/shared-folder-values.yaml");
  }

  private static Path helm() {
    return DeploymentTools.tool("bin/helm");
  }

  private static Path compose() {
    return DeploymentTools.tool("bin/compose-config");
  }

  private static Path validator() {
    return DeploymentTools.tool("venv/bin/kubernetes-validate");
  }

  private Run run(Object... cmd) throws Exception {
    return run(Arrays.stream(cmd).map(Object::toString).collect(Collectors.toList()));
  }

  private Run run(List<String> cmd) throws Exception {
    return expectSuccess(cmd, exec(List.of(), cmd));
  }

  private Run runWithEnv(List<String> env, Object... cmd) throws Exception {
    List<String> command = Arrays.stream(cmd).map(Object::toString).collect(Collectors.toList());
    return expectSuccess(command, exec(env, command));
  }

  private Run runAllowingFailure(Object... cmd) throws Exception {
    return exec(List.of(), Arrays.stream(cmd).map(Object::toString).collect(Collectors.toList()));
  }

  private static Run expectSuccess(List<String> cmd, Run r) {
    assertEquals(0, r.exit(), String.join(" ", cmd) + " failed:\n" + r.output());
    return r;
  }

  /** Runs a command, killed after TIMEOUT, with Helm's caches in this test's folder. */
  private Run exec(List<String> env, List<String> cmd) throws IOException, InterruptedException {
    Map<String, String> vars = new LinkedHashMap<>();
    // Helm keeps its caches under HOME by default; a temporary folder keeps runs apart.
    vars.put("HELM_CACHE_HOME", dir.resolve("helm-cache").toString());
    vars.put("HELM_CONFIG_HOME", dir.resolve("helm-config").toString());
    vars.put("HELM_DATA_HOME", dir.resolve("helm-data").toString());
    for (String e : env) {
      int eq = e.indexOf('=');
      vars.put(e.substring(0, eq), e.substring(eq + 1));
    }
    return DeploymentTools.run(repo, vars, cmd, TIMEOUT);
  }
}
