package io.strata.tests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts the JVMs of a {@link MultiProcessCluster} the way bin/strata does: this JVM's java, a
 * role's main class on a {@link Release}'s classpath, the configuration as {@code -D} properties. A
 * process refuses configuration keys its release does not know, so those are left out and named in
 * the process's {@code <logs>/<name>.out} file (which also receives whatever the process prints).
 */
final class ClusterLauncher {
  private final Path logsDir;

  ClusterLauncher(Path logsDir) {
    this.logsDir = logsDir;
  }

  /** What a release is given of some properties: the command and the keys left out. */
  record Command(List<String> command, List<String> dropped) {}

  /**
   * Starts process {@code name}.
   *
   * @param properties the -D properties, in order; those {@code release} does not know are left out
   * @param jvmOptions options before the properties; -XX:+UseSerialGC is added when they choose no
   *     collector
   * @param arguments the main class's arguments
   */
  Process launch(
      String name,
      Release release,
      Release.Role role,
      Map<String, String> properties,
      List<String> jvmOptions,
      List<String> arguments)
      throws IOException {
    Command c = command(release, role, properties, jvmOptions, arguments);
    Path out = logsDir.resolve(name + ".out");
    if (!c.dropped().isEmpty()) {
      Files.writeString(
          out,
          Instant.now()
              + " strata-tests: not passed to this process of "
              + release
              + ", which does not know them: "
              + String.join(", ", c.dropped())
              + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    }
    ProcessBuilder pb = new ProcessBuilder(c.command());
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()));
    return pb.start();
  }

  static Command command(
      Release release,
      Release.Role role,
      Map<String, String> properties,
      List<String> jvmOptions,
      List<String> arguments) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmOptions);
    if (jvmOptions.stream().noneMatch(o -> o.startsWith("-XX:+Use") && o.endsWith("GC"))) {
      cmd.add("-XX:+UseSerialGC");
    }
    List<String> dropped = new ArrayList<>();
    properties.forEach(
        (k, v) -> {
          if (release.knows(k)) {
            cmd.add("-D" + k + "=" + v);
          } else {
            dropped.add(k);
          }
        });
    cmd.add("-cp");
    cmd.add(release.classpath(role));
    cmd.add(role.mainClass());
    cmd.addAll(arguments);
    return new Command(cmd, dropped);
  }
}
