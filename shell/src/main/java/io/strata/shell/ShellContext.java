package io.strata.shell;

import io.strata.client.FileSystem;
import io.strata.client.master.MasterClient;
import io.strata.common.conf.StrataConfig;
import io.strata.shell.local.LocalClientConf;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * What a command of the shell works with: the configuration (loaded on first use, so that {@code
 * --help} works even with a broken configuration), one {@link FileSystem} and one {@link
 * MasterClient} connected on first use and closed when the command ends, the output and error
 * streams, the environment and the {@code strata.*} system properties given to the shell (passed on
 * to processes it starts).
 *
 * <p>The context of a real run also reads the client configuration that {@code strata local up
 * --masters N} writes ({@link LocalClientConf}): while such a cluster is up, commands configured
 * for its first master find all of them, and so do the processes they start. Tests build a context
 * around their own streams, environment and configuration, without that file.
 */
public final class ShellContext implements AutoCloseable {
  private final Supplier<StrataConfig> configSource;
  private final PrintStream out;
  private final PrintStream err;
  private final Map<String, String> env;
  private final Map<String, String> strataProperties;
  private final boolean localClientConf;
  private StrataConfig config;
  private Map<String, String> completed = Map.of();
  private FileSystem fs;
  private MasterClient master;

  public ShellContext(
      Supplier<StrataConfig> configSource,
      PrintStream out,
      PrintStream err,
      Map<String, String> env,
      Map<String, String> strataProperties) {
    this(configSource, out, err, env, strataProperties, false);
  }

  private ShellContext(
      Supplier<StrataConfig> configSource,
      PrintStream out,
      PrintStream err,
      Map<String, String> env,
      Map<String, String> strataProperties,
      boolean localClientConf) {
    this.configSource = configSource;
    this.out = out;
    this.err = err;
    this.env = Map.copyOf(env);
    this.strataProperties = Map.copyOf(strataProperties);
    this.localClientConf = localClientConf;
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
    return new ShellContext(
        StrataConfig::load,
        new PrintStream(System.out, false, StandardCharsets.UTF_8),
        new PrintStream(System.err, true, StandardCharsets.UTF_8),
        System.getenv(),
        props,
        true);
  }

  /** The configuration; loading it may throw a ConfigException (exit code 2). */
  public StrataConfig conf() {
    if (config == null) {
      StrataConfig loaded = configSource.get();
      if (localClientConf) {
        completed = LocalClientConf.completion(loaded);
        if (!completed.isEmpty()) {
          loaded = loaded.with(completed);
        }
      }
      config = loaded;
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

  /**
   * The master connection, for the calls the file system API does not make (the journal's quorum
   * and backups); connected on first use.
   */
  public MasterClient master() {
    if (master == null) {
      master = new MasterClient(conf());
    }
    return master;
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

  /**
   * The {@code strata.*} system properties given to the shell, to pass on to children, with the
   * master addresses of a running local cluster when the configuration took them from it.
   */
  public Map<String, String> strataProperties() {
    if (localClientConf) {
      conf();
    }
    if (completed.isEmpty()) {
      return strataProperties;
    }
    Map<String, String> all = new HashMap<>(strataProperties);
    all.putAll(completed);
    return Map.copyOf(all);
  }

  @Override
  public void close() {
    out.flush();
    if (fs != null) {
      fs.close();
      fs = null;
    }
    if (master != null) {
      master.close();
      master = null;
    }
  }
}
