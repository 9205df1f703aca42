package io.strata.worker.block;

import io.strata.common.conf.StrataConfig;
import io.strata.common.conf.WorkerKeys;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One storage tier of a worker: its alias (MEM, SSD or HDD), its folder and its capacity. A list of
 * specs is ordered from the fastest tier to the slowest; new blocks prefer the earliest tier with
 * room.
 *
 * @param alias the tier's name as reported to the master and used in metric tags
 * @param dir the tier's folder; committed blocks live in {@code dir/blocks}, writes in {@code
 *     dir/tmp}
 * @param capacityBytes bytes the tier may hold; positive
 * @param dirKey the configuration key that named the folder, quoted in start-up errors
 */
public record TierSpec(String alias, Path dir, long capacityBytes, String dirKey) {
  public TierSpec {
    Objects.requireNonNull(alias);
    Objects.requireNonNull(dir);
    Objects.requireNonNull(dirKey);
    if (capacityBytes <= 0) {
      throw new IllegalArgumentException("tier " + alias + " needs a positive capacity");
    }
  }

  /** A spec whose folder was not named by a configuration key (benchmarks, tests). */
  public TierSpec(String alias, Path dir, long capacityBytes) {
    this(alias, dir, capacityBytes, "tier " + alias + " folder");
  }

  /**
   * The tiers a worker configuration turns on, fastest first. A tier with capacity 0 is off.
   *
   * @throws IllegalArgumentException when every tier is off; the message names the keys
   */
  public static List<TierSpec> fromConfig(StrataConfig conf) {
    List<TierSpec> tiers = new ArrayList<>();
    add(
        tiers,
        "MEM",
        WorkerKeys.MEM_DIR.name(),
        conf.getString(WorkerKeys.MEM_DIR),
        conf.getBytes(WorkerKeys.MEM_CAPACITY));
    add(
        tiers,
        "SSD",
        WorkerKeys.SSD_DIR.name(),
        conf.getString(WorkerKeys.SSD_DIR),
        conf.getBytes(WorkerKeys.SSD_CAPACITY));
    add(
        tiers,
        "HDD",
        WorkerKeys.HDD_DIR.name(),
        conf.getString(WorkerKeys.HDD_DIR),
        conf.getBytes(WorkerKeys.HDD_CAPACITY));
    if (tiers.isEmpty()) {
      throw new IllegalArgumentException(
          "Every worker tier is turned off: set at least one of "
              + WorkerKeys.MEM_CAPACITY.name()
              + ", "
              + WorkerKeys.SSD_CAPACITY.name()
              + " or "
              + WorkerKeys.HDD_CAPACITY.name()
              + " to a size above 0.");
    }
    return tiers;
  }

  private static void add(
      List<TierSpec> tiers, String alias, String key, String dir, long capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException(
          "Negative capacity for tier "
              + alias
              + ": "
              + capacity
              + "; give a size, or 0 to turn the tier off.");
    }
    if (capacity > 0) {
      tiers.add(new TierSpec(alias, Path.of(dir).toAbsolutePath(), capacity, key));
    }
  }
}
