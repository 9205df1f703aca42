package io.strata.tests;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * {@link S3Server} in a process of its own on 127.0.0.1, so that a test can make it stop answering
 * as a hung server does: {@link #pause} stops the process (SIGSTOP), and connections to it are
 * still accepted by the kernel but never answered, until {@link #resume}.
 */
public final class S3ServerProcess implements AutoCloseable {
  private final Process process;
  private final URI endpoint;

  public S3ServerProcess(Path dataDir, Path log) throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    process =
        new ProcessBuilder(
                List.of(
                    java,
                    "-Xmx256m",
                    "-cp",
                    System.getProperty("java.class.path"),
                    S3Server.class.getName(),
                    dataDir.toString()))
            .redirectError(log.toFile())
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line;
    int port = -1;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while ((line = out.readLine()) != null && System.nanoTime() < deadline) {
      if (line.startsWith("PORT ")) {
        port = Integer.parseInt(line.substring(5).trim());
        break;
      }
    }
    if (port < 0) {
      process.destroyForcibly();
      throw new IOException("The S3 server process did not start; see " + log);
    }
    endpoint = URI.create("http://127.0.0.1:" + port);
  }

  public URI endpoint() {
    return endpoint;
  }

  public long pid() {
    return process.pid();
  }

  /** A plain SDK client of the server. */
  public S3Client client() {
    return S3Client.builder()
        .endpointOverride(endpoint)
        .region(Region.US_EAST_1)
        .forcePathStyle(true)
        .credentialsProvider(
            StaticCredentialsProvider.create(
                AwsBasicCredentials.create(S3Server.ACCESS_KEY, S3Server.SECRET_KEY)))
        .build();
  }

  /** Mount options that reach this server with its identity. */
  public Map<String, String> mountOptions() {
    Map<String, String> options = new LinkedHashMap<>();
    options.put("s3.endpoint", endpoint.toString());
    options.put("s3.path.style", "true");
    options.put("s3.access.key", S3Server.ACCESS_KEY);
    options.put("s3.secret.key", S3Server.SECRET_KEY);
    return options;
  }

  /** Stops the server process where it is (SIGSTOP): it accepts nothing more until resumed. */
  public void pause() throws IOException, InterruptedException {
    signal("STOP");
  }

  /** Lets a paused server run again (SIGCONT). */
  public void resume() throws IOException, InterruptedException {
    signal("CONT");
  }

  private void signal(String name) throws IOException, InterruptedException {
    Process kill =
        new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IOException("kill -" + name + " " + process.pid() + " failed");
    }
  }

  @Override
  public void close() throws Exception {
    try {
      resume();
    } catch (IOException e) {
      // Already gone.
    }
    process.destroyForcibly();
    process.waitFor(10, TimeUnit.SECONDS);
  }
}
