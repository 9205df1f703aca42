package io.strata.master.load;

import io.strata.proto.LoadFailure;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.journal.LoadJobEntry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The state of one load job: its definition, its counters, and the window of files listed but not
 * yet passed by the job's resume point.
 *
 * <p>Two sets of counters are kept. The live ones move as blocks finish, in any order, and are what
 * users see. The durable ones move only when the resume point passes a file, that is when every
 * file before it in walk order has finished; they are what the journal records with that point. A
 * restarted master resumes from the point with the durable counters, and the files after it are
 * walked again and counted once.
 *
 * <p>All methods are synchronized on the job; waiting for room in the window uses its monitor.
 */
final class LoadJob {
  /** One listed file of the window. */
  static final class FileTask {
    final String path;
    final long length;
    final boolean verify;

    /** A directory that could not be listed, recorded at its place in the walk. */
    final boolean directory;

    int pendingBlocks;
    long blocksLoaded;
    long bytesLoaded;
    long blocksCached;
    long verifyMissing;
    String failure;
    boolean finished;

    FileTask(String path, long length, int blocks, boolean verify) {
      this(path, length, blocks, verify, false);
    }

    private FileTask(String path, long length, int blocks, boolean verify, boolean directory) {
      this.path = path;
      this.length = length;
      this.pendingBlocks = blocks;
      this.verify = verify;
      this.directory = directory;
    }
  }

  /** Counters of one kind (live or durable). */
  private static final class Counters {
    long filesTotal;
    long bytesTotal;
    long filesDone;
    long bytesDone;
    long filesFailed;
    long blocksLoaded;
    long bytesLoaded;
    long blocksCached;
    long verifyMissing;
  }

  final long id;
  final String path;
  final LoadJobOptions options;
  final long submitTimeMs;

  private LoadJobState state;
  private boolean listingDone;
  private boolean verifyPass;
  private String resumeAfter;
  private long endTimeMs;
  private long elapsedBeforeMs;
  private long runningSinceMs;
  private String waitingFor = "";
  private boolean stopRequested;
  private boolean dirty;
  private final Counters live = new Counters();
  private final Counters durable = new Counters();
  private final ArrayDeque<FileTask> window = new ArrayDeque<>();
  private final List<LoadFailure> unjournaledFailures = new ArrayList<>();

  /** A new job. */
  LoadJob(long id, String path, LoadJobOptions options, long nowMs) {
    this.id = id;
    this.path = path;
    this.options = options;
    this.submitTimeMs = nowMs;
    this.state =
        options.getPartialListing() ? LoadJobState.LOAD_RUNNING : LoadJobState.LOAD_LISTING;
    this.resumeAfter = "";
    this.runningSinceMs = nowMs;
    this.dirty = true;
  }

  /** A job restored from its last journal record. */
  LoadJob(LoadJobEntry e, long nowMs) {
    this.id = e.getJobId();
    this.path = e.getPath();
    this.options = e.getOptions();
    this.submitTimeMs = e.getSubmitTimeMs();
    this.state = e.getState();
    this.listingDone = e.getListingDone();
    this.verifyPass = e.getVerifyPass();
    this.resumeAfter = e.getResumeAfter();
    this.endTimeMs = e.getEndTimeMs();
    this.elapsedBeforeMs = e.getElapsedMs();
    this.runningSinceMs = nowMs;
    for (Counters c : List.of(live, durable)) {
      c.filesTotal = e.getFilesTotal();
      c.bytesTotal = e.getBytesTotal();
      c.filesDone = e.getFilesDone();
      c.bytesDone = e.getBytesDone();
      c.filesFailed = e.getFilesFailed();
      c.blocksLoaded = e.getBlocksLoaded();
      c.bytesLoaded = e.getBytesLoaded();
      c.blocksCached = e.getBlocksCached();
      c.verifyMissing = e.getVerifyMissingBlocks();
    }
    if (state == LoadJobState.LOAD_LISTING) {
      // The count starts over: its partial figures were never journaled as final.
      live.filesTotal = 0;
      live.bytesTotal = 0;
    }
  }

  static boolean isActive(LoadJobState s) {
    return s == LoadJobState.LOAD_LISTING
        || s == LoadJobState.LOAD_RUNNING
        || s == LoadJobState.LOAD_VERIFYING;
  }

  synchronized boolean active() {
    return isActive(state);
  }

  synchronized LoadJobState state() {
    return state;
  }

  synchronized String resumeAfter() {
    return resumeAfter;
  }

  synchronized boolean stopRequested() {
    return stopRequested;
  }

  synchronized void requestStop() {
    stopRequested = true;
    notifyAll();
  }

  synchronized void setWaitingFor(String reason) {
    waitingFor = reason;
  }

  // ---- listing pass ----

  synchronized void counted(long files, long bytes) {
    live.filesTotal += files;
    live.bytesTotal += bytes;
  }

  /** The count is complete: loading starts from the beginning of the walk. */
  synchronized void listingFinished() {
    durable.filesTotal = live.filesTotal;
    durable.bytesTotal = live.bytesTotal;
    listingDone = true;
    if (state == LoadJobState.LOAD_LISTING) {
      state = LoadJobState.LOAD_RUNNING;
      resumeAfter = "";
    }
    dirty = true;
  }

  /** The load pass is over: the verify pass walks again from the beginning. */
  synchronized void startVerify() {
    state = LoadJobState.LOAD_VERIFYING;
    verifyPass = true;
    resumeAfter = "";
    dirty = true;
  }

  synchronized boolean inVerifyPass() {
    return verifyPass;
  }

  // ---- the window ----

  synchronized int windowSize() {
    return window.size();
  }

  /** Waits up to {@code maxMs} for the window to hold fewer than {@code limit} files. */
  synchronized void awaitRoom(int limit, long maxMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + maxMs;
    long left;
    while (window.size() >= limit
        && !stopRequested
        && (left = deadline - System.currentTimeMillis()) > 0) {
      wait(left);
    }
  }

  /** Adds a listed file; with partial listing the totals grow as files are found. */
  synchronized void listed(FileTask task) {
    if (!listingDone && !task.verify) {
      live.filesTotal++;
      live.bytesTotal += task.length;
    }
    window.addLast(task);
    finishIfDone(task);
  }

  /** Records a directory that could not be listed as a failure at its place in the walk. */
  synchronized void listFailed(String dirPath, String reason) {
    FileTask task = new FileTask(dirPath, 0, 0, verifyPass, true);
    task.failure = reason;
    window.addLast(task);
    finishIfDone(task);
  }

  /** The walk found every file (partial listing: the totals are now complete). */
  synchronized void walkFinished() {
    if (!listingDone) {
      listingDone = true;
      durable.filesTotal = live.filesTotal;
      durable.bytesTotal = live.bytesTotal;
      dirty = true;
    }
  }

  /** A block found cached: counted as skipped in the load pass, only checked in verify. */
  synchronized void blockPresent(FileTask task) {
    if (!task.verify) {
      task.blocksCached++;
      live.blocksCached++;
    }
    task.pendingBlocks--;
    finishIfDone(task);
  }

  synchronized void blockMissing(FileTask task) {
    task.verifyMissing++;
    live.verifyMissing++;
  }

  synchronized void blockLoaded(FileTask task, long bytes) {
    task.blocksLoaded++;
    task.bytesLoaded += bytes;
    live.blocksLoaded++;
    live.bytesLoaded += bytes;
    task.pendingBlocks--;
    finishIfDone(task);
  }

  synchronized void blockFailed(FileTask task, String reason) {
    if (task.failure == null) {
      task.failure = reason;
    }
    task.pendingBlocks--;
    finishIfDone(task);
  }

  private void finishIfDone(FileTask task) {
    if (task.pendingBlocks > 0 || task.finished) {
      return;
    }
    task.finished = true;
    apply(live, task);
    advance();
    notifyAll();
  }

  /** Counts a finished file. A verify-pass failure takes back the file counted as done. */
  private static void apply(Counters c, FileTask task) {
    if (task.directory) {
      c.filesFailed++;
    } else if (task.failure == null) {
      if (!task.verify) {
        c.filesDone++;
        c.bytesDone += task.length;
      }
    } else {
      c.filesFailed++;
      if (task.verify) {
        c.filesDone--;
        c.bytesDone -= task.length;
      }
    }
  }

  /** Moves the resume point past every finished file at the head of the window. */
  private void advance() {
    while (!window.isEmpty() && window.peekFirst().finished) {
      FileTask t = window.pollFirst();
      resumeAfter = t.path;
      apply(durable, t);
      durable.blocksLoaded += t.blocksLoaded;
      durable.bytesLoaded += t.bytesLoaded;
      durable.blocksCached += t.blocksCached;
      durable.verifyMissing += t.verifyMissing;
      if (!listingDone && !t.verify && !t.directory) {
        durable.filesTotal++;
        durable.bytesTotal += t.length;
      }
      if (t.failure != null) {
        unjournaledFailures.add(
            LoadFailure.newBuilder().setPath(t.path).setReason(t.failure).build());
      }
      dirty = true;
    }
  }

  /** Failures of files still in the window or not yet journaled, up to {@code max}. */
  synchronized List<LoadFailure> recentFailures(int max) {
    List<LoadFailure> out = new ArrayList<>();
    for (LoadFailure f : unjournaledFailures) {
      if (out.size() >= max) {
        return out;
      }
      out.add(f);
    }
    for (FileTask t : window) {
      if (out.size() >= max) {
        break;
      }
      if (t.finished && t.failure != null) {
        out.add(LoadFailure.newBuilder().setPath(t.path).setReason(t.failure).build());
      }
    }
    return out;
  }

  // ---- the end ----

  /** Ends the job: SUCCEEDED, FAILED (some file failed) or STOPPED. */
  synchronized void end(long nowMs) {
    if (stopRequested) {
      state = LoadJobState.LOAD_STOPPED;
    } else {
      state = live.filesFailed > 0 ? LoadJobState.LOAD_FAILED : LoadJobState.LOAD_SUCCEEDED;
    }
    if (state != LoadJobState.LOAD_STOPPED) {
      listingDone = true;
    }
    elapsedBeforeMs += nowMs - runningSinceMs;
    runningSinceMs = nowMs;
    endTimeMs = nowMs;
    waitingFor = "";
    dirty = true;
    notifyAll();
  }

  /** Ends the job as FAILED because its path itself cannot be walked. */
  synchronized void endWithError(String reason, long nowMs) {
    unjournaledFailures.add(LoadFailure.newBuilder().setPath(path).setReason(reason).build());
    live.filesFailed++;
    durable.filesFailed++;
    end(nowMs);
  }

  // ---- journal and status ----

  /** Whether the journal is behind this job's durable state. */
  synchronized boolean dirty() {
    return dirty;
  }

  /**
   * The journal record of the durable state, with the failures not yet journaled; the job counts
   * them as journaled from now on (the caller journals the record or the master stops).
   */
  synchronized LoadJobEntry.Builder journalRecord(long nowMs) {
    boolean ended = !isActive(state);
    Counters c = ended ? live : durable;
    LoadJobEntry.Builder b =
        LoadJobEntry.newBuilder()
            .setJobId(id)
            .setPath(path)
            .setOptions(options)
            .setState(state)
            .setResumeAfter(resumeAfter)
            .setVerifyPass(verifyPass)
            .setListingDone(listingDone)
            .setFilesTotal(c.filesTotal)
            .setBytesTotal(c.bytesTotal)
            .setFilesDone(c.filesDone)
            .setBytesDone(c.bytesDone)
            .setFilesFailed(c.filesFailed)
            .setBlocksLoaded(c.blocksLoaded)
            .setBytesLoaded(c.bytesLoaded)
            .setBlocksCached(c.blocksCached)
            .setVerifyMissingBlocks(c.verifyMissing)
            .setSubmitTimeMs(submitTimeMs)
            .setEndTimeMs(endTimeMs)
            .setElapsedMs(elapsedMs(nowMs))
            .addAllNewFailures(unjournaledFailures);
    unjournaledFailures.clear();
    dirty = false;
    return b;
  }

  private long elapsedMs(long nowMs) {
    return isActive(state) ? elapsedBeforeMs + (nowMs - runningSinceMs) : elapsedBeforeMs;
  }

  /** What users see: the live counters. */
  synchronized LoadJobStatus.Builder status(long nowMs) {
    return LoadJobStatus.newBuilder()
        .setJobId(id)
        .setPath(path)
        .setOptions(options)
        .setState(state)
        .setFilesTotal(live.filesTotal)
        .setBytesTotal(live.bytesTotal)
        .setListingDone(listingDone)
        .setFilesDone(live.filesDone)
        .setBytesDone(live.bytesDone)
        .setFilesFailed(live.filesFailed)
        .setBlocksLoaded(live.blocksLoaded)
        .setBytesLoaded(live.bytesLoaded)
        .setBlocksCached(live.blocksCached)
        .setVerifyMissingBlocks(live.verifyMissing)
        .setSubmitTimeMs(submitTimeMs)
        .setEndTimeMs(endTimeMs)
        .setElapsedMs(elapsedMs(nowMs))
        .setWaitingFor(waitingFor);
  }
}
