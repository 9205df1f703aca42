package io.strata.master.journal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.JournalEntry;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the metastore durable: every change is written to the {@link Journal} and then applied
 * to the {@link InodeStore}, and checkpoints bound how much journal a restart replays.
 *
 * <p>Start-up ({@link #recover}) discards the live metastore folder, restores it from the newest
 * complete checkpoint and replays every later journal entry through
 * {@link InodeStore#apply}, the same method live writes use; after a {@code kill -9} the state
 * is therefore exactly the state whose changes were acknowledged.
 *
 * <p>Checkpoints are taken every {@code strata.master.journal.checkpoint.period}, after
 * {@code strata.master.journal.checkpoint.entries} entries, on request and on a clean close.
 * Writes and checkpoints exclude each other (this object's monitor), so a checkpoint is always
 * the state after exactly the entries up to its sequence. Segments wholly covered by the newest
 * checkpoint are deleted; the previous checkpoint is kept.
 */
public final class JournalSystem implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(JournalSystem.class);

  private final Journal journal;
  private final Checkpoints checkpoints;
  private final InodeStore store;
  private final long checkpointEntries;
  private final Counter entriesCounter;
  private final Counter checkpointCounter;
  private final ScheduledExecutorService scheduler;
  private final AtomicBoolean checkpointQueued = new AtomicBoolean();
  private volatile long lastCheckpointSequence;
  private volatile LongConsumer appliedListener;
  /** Set when no more writes are accepted (closing, or a failed apply). */
  private boolean closed;
  private boolean released;

  private JournalSystem(Journal journal, Checkpoints checkpoints, InodeStore store,
      long lastCheckpointSequence, StrataConfig conf, MeterRegistry registry) {
    this.journal = journal;
    this.checkpoints = checkpoints;
    this.store = store;
    this.lastCheckpointSequence = lastCheckpointSequence;
    this.checkpointEntries = Math.max(1, conf.getLong(MasterKeys.CHECKPOINT_ENTRIES));
    this.entriesCounter = Counter.builder(MetricNames.MASTER_JOURNAL_ENTRIES)
        .description("Journal entries written").register(registry);
    this.checkpointCounter = Counter.builder(MetricNames.MASTER_JOURNAL_CHECKPOINTS)
        .description("Checkpoints taken").register(registry);
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "journal-checkpoint");
      t.setDaemon(true);
      return t;
    });
    Duration period = conf.getDuration(MasterKeys.CHECKPOINT_PERIOD);
    if (!period.isZero()) {
      scheduler.scheduleWithFixedDelay(this::checkpointQuietly, period.toMillis(),
          period.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Rebuilds the metastore from the journal folder and opens the journal for writing. Fails
   * with a message naming the file when the journal is damaged or of a newer format.
   */
  public static JournalSystem recover(StrataConfig conf, MeterRegistry registry)
      throws IOException {
    Path journalDir = Path.of(conf.getString(MasterKeys.JOURNAL_DIR));
    Path metastoreDir = Path.of(conf.getString(MasterKeys.METASTORE_DIR));
    Checkpoints checkpoints = new Checkpoints(journalDir.resolve("checkpoints"));
    Optional<Checkpoints.Found> newest = checkpoints.newest();
    if (newest.isPresent()) {
      LOG.info("Restoring the metastore from checkpoint {}", newest.get().dir());
      Checkpoints.restore(newest.get(), metastoreDir);
    } else {
      Checkpoints.deleteTree(metastoreDir);
    }
    InodeStore store = InodeStore.open(metastoreDir,
        conf.getInt(MasterKeys.INODE_CACHE_SIZE), registry);
    Journal journal = null;
    try {
      long base = store.appliedSequence();
      if (newest.isPresent() && base != newest.get().sequence()) {
        throw new IOException("Checkpoint " + newest.get().dir() + " claims sequence "
            + newest.get().sequence() + " but its database has applied " + base
            + "; remove that checkpoint folder to fall back to the previous one");
      }
      journal = new Journal(journalDir, conf.getBytes(MasterKeys.JOURNAL_SEGMENT_SIZE),
          conf.getBoolean(MasterKeys.JOURNAL_FSYNC));
      long last = journal.replay(base, store::apply);
      journal.startWriting(last + 1);
      LOG.info("Journal recovered: checkpoint at {}, replayed {} entries, last sequence {}",
          base, last - base, last);
      return new JournalSystem(journal, checkpoints, store,
          newest.map(Checkpoints.Found::sequence).orElse(0L), conf, registry);
    } catch (IOException | RuntimeException e) {
      if (journal != null) {
        journal.close();
      }
      store.close();
      throw e;
    }
  }

  public InodeStore store() {
    return store;
  }

  /**
   * Journals the entries (assigning their sequences) and applies them to the store, in order.
   * Returns after both, so the change is durable and visible.
   */
  public List<JournalEntry> write(List<JournalEntry.Builder> entries)
      throws StrataException {
    return write(entries, null);
  }

  /**
   * {@link #write(List)}, then {@code applied} with the written entries before any other write
   * can start, so that what it publishes of them is in journal order with every other write.
   */
  public synchronized List<JournalEntry> write(List<JournalEntry.Builder> entries,
      Consumer<List<JournalEntry>> applied) throws StrataException {
    if (entries.isEmpty()) {
      return List.of();
    }
    if (closed) {
      throw StrataException.unavailable("The master is shutting down; retry on its restart",
          null);
    }
    List<JournalEntry> written = journal.append(entries);
    entriesCounter.increment(written.size());
    for (JournalEntry e : written) {
      try {
        store.apply(e);
      } catch (IOException ex) {
        // The entry is in the journal: a restart replays it. Until then this master would
        // serve a state that differs from its journal, so refuse further changes.
        LOG.error("Cannot apply journal entry {}; restart the master", e.getSequence(), ex);
        closed = true;
        throw StrataException.internal("Cannot apply a change to the metastore: "
            + ex.getMessage() + " (restart the master)", ex);
      }
    }
    if (applied != null) {
      applied.accept(written);
    }
    LongConsumer listener = appliedListener;
    if (listener != null) {
      listener.accept(journal.lastSequence());
    }
    if (journal.lastSequence() - lastCheckpointSequence >= checkpointEntries
        && checkpointQueued.compareAndSet(false, true)) {
      scheduler.execute(this::checkpointQuietly);
    }
    return written;
  }

  /** Takes a checkpoint now (unless nothing changed since the last) and returns its sequence. */
  public synchronized long checkpoint() throws IOException {
    checkpointQueued.set(false);
    long sequence = store.appliedSequence();
    if (sequence == lastCheckpointSequence) {
      return sequence;
    }
    long start = System.nanoTime();
    checkpoints.take(store, sequence);
    lastCheckpointSequence = sequence;
    journal.roll();
    int deleted = journal.deleteSegmentsCoveredBy(sequence);
    checkpoints.prune(2);
    checkpointCounter.increment();
    LOG.info("Checkpoint at sequence {} taken in {} ms; {} journal segments removed", sequence,
        (System.nanoTime() - start) / 1_000_000, deleted);
    return sequence;
  }

  private void checkpointQuietly() {
    try {
      synchronized (this) {
        if (!closed) {
          checkpoint();
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Checkpoint failed: {}", e.toString(), e);
    }
  }

  public long lastSequence() {
    return journal.lastSequence();
  }

  /**
   * Tells {@code listener} the last sequence after every write, within the write (so in order,
   * and after what the write's own callback published).
   */
  public void onApplied(LongConsumer listener) {
    this.appliedListener = listener;
  }

  public long lastCheckpointSequence() {
    return lastCheckpointSequence;
  }

  /** Closes after a final checkpoint (a clean shutdown). */
  @Override
  public void close() throws IOException {
    close(true);
  }

  /** Closes; without a checkpoint the next start replays the journal, as after a crash. */
  public void close(boolean takeCheckpoint) throws IOException {
    scheduler.shutdownNow();
    try {
      scheduler.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      if (released) {
        return;
      }
      try {
        if (takeCheckpoint && !closed) {
          checkpoint();
        }
      } finally {
        closed = true;
        released = true;
        journal.close();
        store.close();
      }
    }
  }
}
