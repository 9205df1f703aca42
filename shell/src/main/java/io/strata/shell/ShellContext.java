package io.strata.shell;

import io.strata.client.FileSystem;
import io.strata.common.conf.StrataConfig;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * What a command of the shell works with: the configuration (loaded on first use, so that
 * {@code --help} works even with a broken configuration), one {@link FileSystem} connected on
 * first use and closed when the command ends, the output and error streams, the environment and
 * the {@code strata.*} system properties given to the shell (passed on to processes it starts).
 * Tests build one around their own streams, environment and configuration.
 */
public final class ShellContext implements AutoCloseable {
  private final Supplier<StrataConfig> configSource;
  private final PrintStream out;
  private final PrintStream err;
  private final Map<String, String> env;
  private final Map<String, String> strataProperties;
  private StrataConfig config;
  private FileSystem fs;

  public ShellContext(Supplier<StrataConfig> configSource, PrintStream out, PrintStream err,
      Map<String, String> env, Map<String, String> strataProperties) {
    this.configSource = configSource;
    this.out = out;
    this.err = err;
    this.env = Map.copyOf(env);
    this.strataProperties = Map.copyOf(strataProperties);
  }

  /** The context of a real run: System streams, environment and properties. */
  public static ShellContext system() {
    Map<String, String> props = new HashMap<>();
    Properties sys = System.getProperties();
    for (String name : sys.stringPropertyNames()) {
      if (name.startsWith("strata.")) {
        props.put(name, sys.getProperty(name));
      }
    }
    return new ShellContext(StrataConfig::load,
        new PrintStream(System.out, false, StandardCharsets.UTF_8),
        new PrintStream(System.err, true, StandardCharsets.UTF_8), System.getenv(), props);
  }

  /** The configuration; loading it may throw a ConfigException (exit code 2). */
  public StrataConfig conf() {
    if (config == null) {
      config = configSource.get();
    }
    return config;
  }

  /** The file system client, connected on first use. */
  public FileSystem fs() {
    if (fs == null) {
      fs = FileSystem.connect(conf());
    }
    return fs;
  }

  public PrintStream out() {
    return out;
  }

  public PrintStream err() {
    return err;
  }

  public Map<String, String> env() {
    return env;
  }

  /** The {@code strata.*} system properties given to the shell, to pass on to children. */
  public Map<String, String> strataProperties() {
    return strataProperties;
  }

  @Override
  public void close() {
    out.flush();
    if (fs != null) {
      fs.close();
      fs = null;
    }
  }
}
