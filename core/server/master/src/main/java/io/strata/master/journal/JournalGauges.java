package io.strata.master.journal;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.metrics.MetricNames;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;

/** The journal's gauges: role, term, indexes, log and snapshot sizes, the group commit. */
final class JournalGauges {
  private final Callable<RaftServer.Division> division;
  private final Supplier<Snapshots.Found> latest;

  private JournalGauges(Callable<RaftServer.Division> division, Supplier<Snapshots.Found> latest) {
    this.division = division;
    this.latest = latest;
  }

  static void register(
      MeterRegistry registry,
      Callable<RaftServer.Division> division,
      BooleanSupplier leading,
      Supplier<Snapshots.Found> latest,
      Path journalDir,
      GroupCommit commit) {
    // Micrometer holds a gauge's object weakly unless told otherwise, and nothing else holds
    // these: strong references, or the gauges read NaN after the first collection.
    JournalGauges g = new JournalGauges(division, latest);
    Gauge.builder(MetricNames.MASTER_JOURNAL_ROLE, leading, l -> l.getAsBoolean() ? 1 : 0)
        .description("1 while this master leads the group, 0 otherwise")
        .strongReference(true)
        .register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_TERM, g, j -> j.info(DivisionInfo::getCurrentTerm))
        .description("Current Raft term")
        .strongReference(true)
        .register(registry);
    Gauge.builder(
            MetricNames.MASTER_JOURNAL_APPLIED_INDEX,
            g,
            j -> j.info(DivisionInfo::getLastAppliedIndex))
        .description("Last journal index applied to the metastore")
        .strongReference(true)
        .register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_COMMIT_INDEX, g, JournalGauges::commitIndex)
        .description("Last journal index known committed")
        .strongReference(true)
        .register(registry);
    Path log = RaftSettings.groupDir(journalDir).resolve("current");
    Gauge.builder(MetricNames.MASTER_JOURNAL_LOG_BYTES, log, JournalGauges::folderBytes)
        .description("Bytes of journal log segments on this master")
        .strongReference(true)
        .register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_SNAPSHOT_AGE, g, JournalGauges::snapshotAge)
        .description("Seconds since the newest snapshot was written (-1: none)")
        .strongReference(true)
        .register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_SNAPSHOT_BYTES, g, JournalGauges::snapshotBytes)
        .description("Bytes of the newest snapshot")
        .strongReference(true)
        .register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_QUEUED, commit, c -> c.backlog()[0])
        .description("Changes handed to the journal and not yet sent in an entry")
        .strongReference(true)
        .register(registry);
    Gauge.builder(MetricNames.MASTER_JOURNAL_IN_FLIGHT, commit, c -> c.backlog()[1])
        .description("Journal entries sent and not yet committed and applied")
        .strongReference(true)
        .register(registry);
  }

  private double info(ToLongFunction<DivisionInfo> f) {
    try {
      return f.applyAsLong(division.call().getInfo());
    } catch (Exception e) {
      return -1;
    }
  }

  private double commitIndex() {
    try {
      return division.call().getRaftLog().getLastCommittedIndex();
    } catch (Exception e) {
      return -1;
    }
  }

  private double snapshotAge() {
    Snapshots.Found s = latest.get();
    return s == null ? -1 : (System.currentTimeMillis() - s.header().getCreatedMs()) / 1000.0;
  }

  private double snapshotBytes() {
    Snapshots.Found s = latest.get();
    return s == null ? 0 : folderBytes(s.dir());
  }

  private static double folderBytes(Path dir) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.map(Path::toFile).filter(File::isFile).mapToLong(File::length).sum();
    } catch (IOException | java.io.UncheckedIOException e) {
      return -1;
    }
  }
}
