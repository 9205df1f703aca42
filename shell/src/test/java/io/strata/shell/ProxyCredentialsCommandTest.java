package io.strata.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.StrataConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `strata proxy credentials`: shows the proxy's keys and adds new ones in a 0600 file. */
class ProxyCredentialsCommandTest {
  @TempDir Path dir;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    Map<String, String> props = new HashMap<>();
    props.put("strata.home", dir.toString());
    props.put("strata.proxy.credentials.file", dir.resolve("keys/creds").toString());
    try (ShellContext ctx =
        new ShellContext(
            () -> StrataConfig.load(props),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            Map.of(),
            props)) {
      return StrataShell.run(ctx, args);
    }
  }

  @Test
  void addWritesAPrivateFileAndListingShowsEveryKey() throws Exception {
    assertEquals(1, run("proxy", "credentials"));
    assertTrue(
        err.toString(StandardCharsets.UTF_8).contains("strata proxy credentials --add"),
        err.toString(StandardCharsets.UTF_8));

    assertEquals(0, run("proxy", "credentials", "--add", "alice"));
    assertEquals(0, run("proxy", "credentials", "--add", "bob"));
    Path file = dir.resolve("keys/creds");
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    List<String> keys =
        Files.readAllLines(file).stream().filter(l -> !l.startsWith("#") && !l.isBlank()).toList();
    assertEquals(2, keys.size());
    assertTrue(keys.get(0).matches("[A-Z0-9]{20} \\S{40} alice"), keys.get(0));
    assertTrue(keys.get(1).endsWith(" bob"), keys.get(1));
    out.reset();
    assertEquals(0, run("proxy", "credentials"));
    String shown = out.toString(StandardCharsets.UTF_8);
    assertTrue(shown.contains(keys.get(0)) && shown.contains(keys.get(1)), shown);

    assertEquals(2, run("proxy", "credentials", "--add", "two words"));
  }
}
