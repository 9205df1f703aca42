package io.strata.master.load;

import com.google.common.util.concurrent.RateLimiter;
import io.strata.common.BlockIds;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.file.Namespace;
import io.strata.proto.FileInfo;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockTask;
import io.strata.proto.LoadJobState;
import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one load job on its own thread: the count (unless the listing is partial), the load pass and
 * the verify pass, each a {@link TreeWalk} from the job's resume point. Files enter the job's
 * window as they are walked; each block not cached on a live worker becomes a task for the {@link
 * BlockDispatcher}. The walk pauses while the window is full, so the job holds at most the window's
 * files whatever the size of the tree. The job's durable state is journaled every journal interval
 * and at every change of phase.
 *
 * <p>Interrupted (the master stopping), the runner returns without ending the job: the next master
 * resumes it from the last journaled point. While the master stops, a failed store call is taken
 * for the effect of the interrupt, never as a failure of the job or of a directory.
 */
final class LoadJobRunner implements Runnable, BlockDispatcher.Owner {
  private static final Logger LOG = LoggerFactory.getLogger(LoadJobRunner.class);

  /** Writes a job's journal record; false when the journal no longer takes writes. */
  interface JobJournal {
    boolean record(LoadJob job);

    /** Whether a file failed in an earlier pass of the job (the verify pass skips it). */
    boolean failedBefore(LoadJob job, String path);
  }

  /** Tunables from configuration. */
  record Settings(int pageSize, int windowFiles, long journalIntervalMs) {}

  private final LoadJob job;
  private final Namespace namespace;
  private final WorkerRegistry workers;
  private final BlockDispatcher dispatcher;
  private final JobJournal journal;
  private final Settings settings;
  private final BooleanSupplier masterStopping;

  /** Time to wait before starting: a resumed job gives the workers time to register. */
  private final long startDelayMs;

  /** Permits are KiB of under-store reads; null when the job has no bandwidth cap. */
  private final RateLimiter bandwidth;

  private long lastJournalMs;

  LoadJobRunner(
      LoadJob job,
      Namespace namespace,
      WorkerRegistry workers,
      BlockDispatcher dispatcher,
      JobJournal journal,
      Settings settings,
      BooleanSupplier masterStopping,
      long startDelayMs) {
    this.startDelayMs = startDelayMs;
    this.job = job;
    this.namespace = namespace;
    this.workers = workers;
    this.dispatcher = dispatcher;
    this.journal = journal;
    this.settings = settings;
    this.masterStopping = masterStopping;
    long cap = job.options.getBandwidthBytesPerSec();
    this.bandwidth = cap > 0 ? RateLimiter.create(Math.max(1.0, cap / 1024.0)) : null;
  }

  @Override
  public void run() {
    Thread.currentThread().setName("load-job-" + job.id);
    try {
      if (startDelayMs > 0) {
        job.setWaitingFor("workers to register with the restarted master");
        long until = System.currentTimeMillis() + startDelayMs;
        while (System.currentTimeMillis() < until && !job.stopRequested()) {
          checkInterrupted();
          Thread.sleep(Math.min(100, Math.max(1, until - System.currentTimeMillis())));
        }
        job.setWaitingFor("");
      }
      if (job.state() == LoadJobState.LOAD_LISTING) {
        count();
        checkInterrupted();
        if (!job.stopRequested()) {
          job.listingFinished();
          if (!journal.record(job)) {
            return;
          }
        }
      }
      if (job.state() == LoadJobState.LOAD_RUNNING && !job.stopRequested()) {
        if (!pass(false)) {
          return;
        }
        if (job.options.getVerify() && !job.stopRequested()) {
          job.startVerify();
          if (!journal.record(job)) {
            return;
          }
        }
      }
      if (job.state() == LoadJobState.LOAD_VERIFYING && !job.stopRequested()) {
        if (!pass(true)) {
          return;
        }
      }
      end();
    } catch (InterruptedException | CancellationException e) {
      LOG.info(
          "Load job {} of {} paused: the master is stopping; it resumes on restart",
          job.id,
          job.path);
    } catch (IOException | RuntimeException e) {
      if (masterStopping.getAsBoolean()) {
        LOG.info(
            "Load job {} of {} paused: the master is stopping; it resumes on restart "
                + "(its last store call ended with {})",
            job.id,
            job.path,
            e.toString());
        return;
      }
      LOG.warn("Load job {} of {} cannot walk its path: {}", job.id, job.path, e.toString());
      dispatcher.cancel(this);
      job.endWithError(
          "cannot walk " + job.path + ": " + e.getMessage(), System.currentTimeMillis());
      journal.record(job);
    }
  }

  private void end() {
    if (job.stopRequested()) {
      dispatcher.cancel(this);
    }
    job.end(System.currentTimeMillis());
    journal.record(job);
    LOG.info(
        "Load job {} of {} ended: {}",
        job.id,
        job.path,
        job.status(System.currentTimeMillis()).build().toString().replace('\n', ' '));
  }

  /** Counts the files and bytes to load, so that progress has totals and an ETA. */
  private void count() throws IOException, InterruptedException {
    TreeWalk walk =
        new TreeWalk(namespace, job.path, "", settings.pageSize(), (p, r) -> failIfStopping());
    FileInfo f;
    long files = 0;
    long bytes = 0;
    while ((f = walk.next()) != null) {
      files++;
      bytes += f.getLength();
      if (files % 1000 == 0) {
        job.counted(files, bytes);
        files = 0;
        bytes = 0;
        if (job.stopRequested()) {
          return;
        }
        checkInterrupted();
      }
    }
    job.counted(files, bytes);
  }

  /**
   * Walks from the resume point, sending every block that no live worker holds, then waits for the
   * window to empty.
   *
   * @return false when the journal stopped taking writes (the master is stopping)
   */
  private boolean pass(boolean verify) throws IOException, InterruptedException {
    TreeWalk walk =
        new TreeWalk(
            namespace,
            job.path,
            job.resumeAfter(),
            settings.pageSize(),
            (dir, reason) -> listFailed(dir, reason, verify));
    boolean walkEnded = false;
    while (!job.stopRequested()) {
      job.awaitRoom(settings.windowFiles(), settings.journalIntervalMs());
      if (!tick()) {
        return false;
      }
      if (job.windowSize() >= settings.windowFiles()) {
        continue;
      }
      FileInfo f = walk.next();
      if (f == null) {
        walkEnded = true;
        break;
      }
      add(f, verify);
    }
    // A stop leaves the walk unfinished: the totals of a partial listing stay partial.
    if (!verify && walkEnded) {
      job.walkFinished();
    }
    while (!job.stopRequested() && job.windowSize() > 0) {
      job.awaitRoom(1, settings.journalIntervalMs());
      if (!tick()) {
        return false;
      }
    }
    return true;
  }

  /** Journals when due and notes whether the job waits for workers. */
  private boolean tick() throws InterruptedException {
    checkInterrupted();
    job.setWaitingFor(dispatcher.waitingForWorkers(this) ? "a live worker" : "");
    long now = System.currentTimeMillis();
    if (now - lastJournalMs >= settings.journalIntervalMs() && job.dirty()) {
      lastJournalMs = now;
      return journal.record(job);
    }
    return true;
  }

  private void checkInterrupted() throws InterruptedException {
    if (Thread.interrupted() || masterStopping.getAsBoolean()) {
      throw new InterruptedException();
    }
  }

  /** Ends the walk when the master stops: its interrupt, not the directory, failed the call. */
  private void failIfStopping() {
    if (masterStopping.getAsBoolean()) {
      throw new CancellationException("the master is stopping");
    }
  }

  private void listFailed(String dir, String reason, boolean verify) {
    failIfStopping();
    if (verify && journal.failedBefore(job, dir)) {
      return; // counted as failed by the load pass already
    }
    job.listFailed(dir, reason);
  }

  private void add(FileInfo f, boolean verify) throws InterruptedException {
    if (verify && journal.failedBefore(job, f.getPath())) {
      return;
    }
    if (!f.getComplete()) {
      LoadJob.FileTask task = new LoadJob.FileTask(f.getPath(), f.getLength(), 0, verify);
      task.failure = "the file is still being written; load it once it is complete";
      job.listed(task);
      return;
    }
    long blockSize = f.getBlockSize();
    int count = f.getLength() == 0 ? 0 : BlockIds.blockCount(f.getLength(), blockSize);
    LoadJob.FileTask task = new LoadJob.FileTask(f.getPath(), f.getLength(), count, verify);
    job.listed(task);
    for (int i = 0; i < count; i++) {
      long blockId = BlockIds.blockId(f.getFileId(), i);
      if (dispatcher.heldByEligibleWorker(workers.locations(blockId))) {
        job.blockPresent(task);
        continue;
      }
      if (verify) {
        job.blockMissing(task);
      }
      long start = i * blockSize;
      long length = Math.min(blockSize, f.getLength() - start);
      throttle(length);
      dispatcher.submit(
          new BlockDispatcher.BlockTask(
              LoadBlockTask.newBuilder()
                  .setBlockId(blockId)
                  .setUfsPath(f.getUfsPath())
                  .setMountId(f.getMountId())
                  .setBlockStart(start)
                  .setBlockLength(length)
                  .build(),
              this,
              task));
    }
  }

  /** Waits for the bandwidth cap, journaling and honouring a stop while it waits. */
  private void throttle(long bytes) throws InterruptedException {
    if (bandwidth == null) {
      return;
    }
    int permits = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (bytes + 1023) / 1024));
    while (!bandwidth.tryAcquire(permits, settings.journalIntervalMs(), TimeUnit.MILLISECONDS)) {
      if (job.stopRequested()) {
        return;
      }
      tick();
    }
  }

  @Override
  public void finished(BlockDispatcher.BlockTask task, LoadBlockOutcome outcome, String message) {
    LoadJob.FileTask file = (LoadJob.FileTask) task.context;
    switch (outcome) {
      case LOAD_BLOCK_LOADED -> job.blockLoaded(file, task.task.getBlockLength());
      case LOAD_BLOCK_ALREADY_CACHED -> job.blockPresent(file);
      case LOAD_BLOCK_NOT_FOUND ->
          job.blockFailed(
              file,
              "the under-store file "
                  + task.task.getUfsPath()
                  + " does not exist any more (removed after the job listed"
                  + " it)");
      default ->
          job.blockFailed(
              file,
              "block "
                  + task.task.getBlockId()
                  + " failed "
                  + (task.failures)
                  + " times; last: "
                  + message);
    }
  }
}
