package io.strata.master.load;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.DaemonThreads;
import io.strata.common.PathNames;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.file.Namespace;
import io.strata.master.journal.JournalSystem;
import io.strata.proto.LoadFailure;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.SubmitLoadResponse;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.LoadJobEntry;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's load jobs: submits, stops and reports them, one active job per path, and resumes the
 * jobs that were running when the master last stopped. The last job of each path stays readable
 * after it ends, until the path's next job replaces it. Each active job runs on its own {@link
 * LoadJobRunner} thread; all share one {@link BlockDispatcher}, so the per-worker limits hold
 * across jobs.
 */
public final class LoadJobManager implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(LoadJobManager.class);

  private final Namespace namespace;
  private final WorkerRegistry workers;
  private final JournalSystem journal;
  private final BlockDispatcher dispatcher;
  private final LoadJobRunner.Settings settings;
  private final Counter filesFailed;
  private final ExecutorService runners =
      Executors.newCachedThreadPool(DaemonThreads.named("load-job"));
  private final long resumeDelayMs;
  private final Map<String, LoadJob> jobs = new HashMap<>();
  private long nextJobId = 1;
  private volatile boolean closed;

  public LoadJobManager(
      Namespace namespace,
      WorkerRegistry workers,
      JournalSystem journal,
      StrataConfig conf,
      MeterRegistry registry) {
    this.namespace = namespace;
    this.workers = workers;
    this.journal = journal;
    this.dispatcher =
        new BlockDispatcher(
            workers,
            conf.getInt(MasterKeys.LOAD_WORKER_INFLIGHT_BLOCKS),
            conf.getInt(MasterKeys.LOAD_BATCH_SIZE),
            conf.getInt(MasterKeys.LOAD_RETRIES),
            conf.getDuration(MasterKeys.LOAD_RPC_TIMEOUT),
            registry);
    this.settings =
        new LoadJobRunner.Settings(
            conf.getInt(MasterKeys.LOAD_LIST_PAGE_SIZE),
            Math.max(1, conf.getInt(MasterKeys.LOAD_WINDOW_FILES)),
            Math.max(10, conf.getDuration(MasterKeys.LOAD_JOURNAL_INTERVAL).toMillis()));
    this.resumeDelayMs = conf.getDuration(MasterKeys.LOAD_RESUME_DELAY).toMillis();
    this.filesFailed =
        Counter.builder(MetricNames.MASTER_LOAD_FILES_FAILED)
            .description("Files that load jobs recorded as failed")
            .register(registry);
    Gauge.builder(MetricNames.MASTER_LOAD_JOBS_ACTIVE, this, LoadJobManager::activeJobs)
        .description("Load jobs that have not ended")
        .register(registry);
  }

  /** Restores the jobs of the metastore and resumes those that had not ended. */
  public synchronized void start() {
    long now = System.currentTimeMillis();
    for (LoadJobEntry e : journal.store().loadJobs()) {
      nextJobId = Math.max(nextJobId, e.getJobId() + 1);
      jobs.put(e.getPath(), new LoadJob(e, now));
    }
    for (LoadJob job : jobs.values()) {
      if (job.active()) {
        LOG.info(
            "Resuming load job {} of {} ({}) after {}",
            job.id,
            job.path,
            job.state(),
            job.resumeAfter().isEmpty() ? "its start" : job.resumeAfter());
        launch(job, resumeDelayMs);
      }
    }
  }

  private synchronized int activeJobs() {
    int n = 0;
    for (LoadJob j : jobs.values()) {
      if (j.active()) {
        n++;
      }
    }
    return n;
  }

  /** Starts a job of a path, or reports the one already running there. */
  public SubmitLoadResponse submit(String rawPath, LoadJobOptions options) throws IOException {
    String path = PathNames.normalize(rawPath);
    if (options.getBandwidthBytesPerSec() < 0) {
      throw StrataException.invalidArgument(
          "The bandwidth of a load must not be negative ("
              + options.getBandwidthBytesPerSec()
              + "); give e.g. --bandwidth 200MB");
    }
    Namespace.join(namespace.getStatus(path));
    LoadJob job;
    synchronized (this) {
      if (closed) {
        throw StrataException.unavailable(
            "The master is stopping; submit the load again once" + " it is back", null);
      }
      LoadJob running = jobs.get(path);
      if (running != null && running.active()) {
        return SubmitLoadResponse.newBuilder()
            .setAlreadyRunning(true)
            .setJob(running.status(System.currentTimeMillis()))
            .build();
      }
      job = new LoadJob(nextJobId++, path, options, System.currentTimeMillis());
      if (!record(job)) {
        throw StrataException.unavailable(
            "The master is stopping; submit the load again once" + " it is back", null);
      }
      jobs.put(path, job);
      launch(job, 0);
    }
    LOG.info(
        "Load job {} of {} submitted ({})", job.id, path, options.toString().replace('\n', ' '));
    return SubmitLoadResponse.newBuilder().setJob(job.status(System.currentTimeMillis())).build();
  }

  /** The status of the path's job, with up to {@code maxFailures} failures. */
  public LoadJobStatus status(String rawPath, int maxFailures) throws StrataException {
    LoadJob job = job(PathNames.normalize(rawPath));
    LoadJobStatus.Builder status = job.status(System.currentTimeMillis());
    if (maxFailures > 0) {
      List<LoadFailure> failures = new ArrayList<>(job.recentFailures(maxFailures));
      if (failures.size() < maxFailures) {
        for (LoadFailure f : journal.store().loadFailures(job.id, maxFailures)) {
          if (failures.size() >= maxFailures) {
            break;
          }
          failures.add(f);
        }
      }
      status.addAllFailures(failures);
    }
    return status.build();
  }

  /** Stops the path's running job; blocks already sent to workers finish there. */
  public LoadJobStatus stop(String rawPath) throws StrataException {
    String path = PathNames.normalize(rawPath);
    LoadJob job = job(path);
    if (!job.active()) {
      throw StrataException.failedPrecondition(
          "The load of " + path + " already ended (" + job.state() + "); there is nothing to stop");
    }
    job.requestStop();
    LOG.info("Load job {} of {} stop requested", job.id, path);
    return job.status(System.currentTimeMillis()).build();
  }

  private synchronized LoadJob job(String path) throws StrataException {
    LoadJob job = jobs.get(path);
    if (job == null) {
      throw new StrataException(
          ErrorCode.NOT_FOUND,
          "No load job of " + path + " is known; start one with `strata fs load " + path + "`");
    }
    return job;
  }

  private void launch(LoadJob job, long delayMs) {
    runners.execute(
        new LoadJobRunner(
            job,
            namespace,
            workers,
            dispatcher,
            new LoadJobRunner.JobJournal() {
              @Override
              public boolean record(LoadJob j) {
                return LoadJobManager.this.record(j);
              }

              @Override
              public boolean failedBefore(LoadJob j, String path) {
                return journal.store().hasLoadFailure(j.id, path);
              }
            },
            settings,
            () -> closed,
            delayMs));
  }

  /** Journals the job's durable state; false when the journal refuses (stopping master). */
  private boolean record(LoadJob job) {
    LoadJobEntry.Builder entry = job.journalRecord(System.currentTimeMillis());
    if (entry.getNewFailuresCount() > 0) {
      filesFailed.increment(entry.getNewFailuresCount());
    }
    try {
      journal.write(List.of(JournalEntry.newBuilder().setLoadJob(entry)));
      return true;
    } catch (StrataException e) {
      LOG.info("Load job {} not journaled: {}", job.id, e.getMessage());
      return false;
    }
  }

  /**
   * Stops the runners without ending their jobs and journals where each stands, so the next master
   * resumes them.
   */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    // Runners see `closed` at their next step and return. They are interrupted only when one
    // is stuck (in an under-store call): an interrupt during a journal write would close the
    // journal's file under the master.
    runners.shutdown();
    try {
      if (!runners.awaitTermination(10, TimeUnit.SECONDS)) {
        runners.shutdownNow();
        runners.awaitTermination(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      runners.shutdownNow();
      Thread.currentThread().interrupt();
    }
    dispatcher.close();
    synchronized (this) {
      for (LoadJob job : jobs.values()) {
        if (job.active() && job.dirty()) {
          record(job);
        }
      }
    }
  }
}
