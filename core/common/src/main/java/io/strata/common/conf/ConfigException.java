package io.strata.common.conf;

/** A configuration problem; the message names the key, the bad value and what is expected. */
public final class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }
}
