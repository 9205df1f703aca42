package io.strata.master.file;

import io.strata.common.error.StrataException;
import io.strata.proto.MountInfo;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which mount options belong to Strata and which are secrets. Strata's own options (today only
 * {@value #SYNC_INTERVAL}) configure the master and are never handed to an under store; every other
 * option is the store's. An option is secret when its name contains secret, password, token,
 * credential or key -- except an access key, which names an account rather than proving it. Secret
 * values are kept as given in the journal and shown masked unless a caller that opens stores asks
 * for them.
 */
public final class MountOptionPolicy {
  /** The mount's own sync interval: never, always, or a duration such as 30s. */
  public static final String SYNC_INTERVAL = "sync.interval";

  /** What a secret value reads as in listings. */
  public static final String MASKED = "******";

  private static final Set<String> STRATA_OPTIONS = Set.of(SYNC_INTERVAL);
  private static final Pattern ACCESS_KEY = Pattern.compile("access[._-]?key");
  private static final String[] SECRET_WORDS = {"secret", "password", "token", "credential"};

  private MountOptionPolicy() {}

  /** The options an under store is opened with: all but Strata's own. */
  public static Map<String, String> storeOptions(Map<String, String> options) {
    boolean any = false;
    for (String name : STRATA_OPTIONS) {
      any |= options.containsKey(name);
    }
    if (!any) {
      return options;
    }
    Map<String, String> out = new HashMap<>(options);
    out.keySet().removeAll(STRATA_OPTIONS);
    return out;
  }

  /**
   * Checks Strata's own options of a mount request.
   *
   * @throws StrataException INVALID_ARGUMENT naming the option, its value and what is expected
   */
  public static void validate(String path, String ufsUri, Map<String, String> options)
      throws StrataException {
    String interval = options.get(SYNC_INTERVAL);
    if (interval != null) {
      try {
        SyncInterval.parse(interval);
      } catch (IllegalArgumentException e) {
        throw StrataException.invalidArgument(
            "Cannot mount "
                + ufsUri
                + " at "
                + path
                + ": bad option "
                + SYNC_INTERVAL
                + ": "
                + e.getMessage());
      }
    }
  }

  /** The sync interval a mount sets for its paths, or null when it sets none. */
  public static SyncInterval syncInterval(MountInfo mount) {
    String text = mount.getOptionsMap().get(SYNC_INTERVAL);
    if (text == null) {
      return null;
    }
    try {
      return SyncInterval.parse(text);
    } catch (IllegalArgumentException e) {
      // Validated when mounted; a value that no longer parses falls back to the default.
      return null;
    }
  }

  /** Whether an option's value is a secret. */
  public static boolean isSecret(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (String word : SECRET_WORDS) {
      if (n.contains(word)) {
        return true;
      }
    }
    return ACCESS_KEY.matcher(n).replaceAll("").contains("key");
  }

  /**
   * A mount as a listing shows it.
   *
   * @param includeSecrets keep secret values as they are instead of masking them
   * @param storeOptionsOnly leave out Strata's own options
   */
  public static MountInfo view(MountInfo mount, boolean includeSecrets, boolean storeOptionsOnly) {
    Map<String, String> options =
        storeOptionsOnly ? storeOptions(mount.getOptionsMap()) : mount.getOptionsMap();
    if (includeSecrets && options == mount.getOptionsMap()) {
      return mount;
    }
    Map<String, String> shown = new HashMap<>();
    for (Map.Entry<String, String> e : options.entrySet()) {
      shown.put(e.getKey(), !includeSecrets && isSecret(e.getKey()) ? MASKED : e.getValue());
    }
    return mount.toBuilder().clearOptions().putAllOptions(shown).build();
  }
}
