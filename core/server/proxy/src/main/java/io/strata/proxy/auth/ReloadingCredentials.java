package io.strata.proxy.auth;

import io.strata.common.auth.ProxyCredentials;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The access keys of a credentials file, read again when the file changes (checked at most once a
 * second), so that keys added with {@code strata proxy credentials} or by hand are accepted without
 * a restart. A file that becomes unreadable or malformed keeps the last good keys and logs why once
 * per change.
 */
public final class ReloadingCredentials
    implements Function<String, Optional<ProxyCredentials.Credential>> {
  private static final Logger LOG = LoggerFactory.getLogger(ReloadingCredentials.class);
  private static final long CHECK_INTERVAL_NANOS = 1_000_000_000L;

  private final Path file;
  private volatile ProxyCredentials current;
  private volatile long checkedAtNanos;
  private volatile long loadedModified;

  /**
   * Loads the file, which may be missing (no key is accepted until it appears).
   *
   * @throws IOException when it exists but cannot be read or parsed
   */
  public ReloadingCredentials(Path file) throws IOException {
    this.file = file;
    this.checkedAtNanos = System.nanoTime();
    this.current = load();
  }

  private ProxyCredentials load() throws IOException {
    try {
      loadedModified = Files.getLastModifiedTime(file).toMillis();
      return ProxyCredentials.load(file);
    } catch (NoSuchFileException e) {
      loadedModified = -1;
      return ProxyCredentials.of(java.util.List.of());
    }
  }

  /** Keys loaded now. */
  public int size() {
    return current.size();
  }

  @Override
  public Optional<ProxyCredentials.Credential> apply(String accessKey) {
    long now = System.nanoTime();
    if (now - checkedAtNanos > CHECK_INTERVAL_NANOS) {
      checkedAtNanos = now;
      reloadIfChanged();
    }
    return current.find(accessKey);
  }

  private synchronized void reloadIfChanged() {
    long modified;
    try {
      modified = Files.getLastModifiedTime(file).toMillis();
    } catch (IOException e) {
      modified = -1;
    }
    if (modified == loadedModified) {
      return;
    }
    try {
      current = load();
      LOG.info("Read {} access keys from {}", current.size(), file);
    } catch (IOException | RuntimeException e) {
      loadedModified = modified;
      LOG.warn(
          "Cannot read the credentials file {}: {} (keeping the {} keys read before)",
          file,
          e.getMessage(),
          current.size());
    }
  }
}
