package io.strata.client;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.strata.proto.GetLoadStatusRequest;
import io.strata.proto.GetLoadStatusResponse;
import io.strata.proto.LoadFailure;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.LoadMasterGrpc;
import io.strata.proto.StopLoadRequest;
import io.strata.proto.StopLoadResponse;
import io.strata.proto.SubmitLoadRequest;
import io.strata.proto.SubmitLoadResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A load-job service double that plays a scripted job: SubmitLoad answers the first status of the
 * script, each GetLoadStatus the next one (the last one again once the script is spent), StopLoad
 * turns the current status into a stopped one. GetLoadStatus and StopLoad of a path other than the
 * script's answer NOT_FOUND, as the master does for a path that never had a job. It can also play a
 * master that does not answer for a while. Every request is recorded.
 */
public final class TestLoadMaster extends LoadMasterGrpc.LoadMasterImplBase {
  public final List<SubmitLoadRequest> submits = new CopyOnWriteArrayList<>();
  public final List<GetLoadStatusRequest> statusRequests = new CopyOnWriteArrayList<>();
  public final List<StopLoadRequest> stops = new CopyOnWriteArrayList<>();

  private final List<LoadJobStatus> script = new ArrayList<>();
  private final List<LoadFailure> failures = new ArrayList<>();
  private int next;
  private int answered;
  private boolean alreadyRunning;
  private int outageAt = -1;
  private long outageNanos;
  private long outageStart = -1;

  /** The statuses the job goes through; the first one is what SubmitLoad answers. */
  public synchronized void script(LoadJobStatus... statuses) {
    script.clear();
    script.addAll(List.of(statuses));
    next = 0;
  }

  /** Makes SubmitLoad answer that the job was running already. */
  public synchronized void alreadyRunning(boolean value) {
    alreadyRunning = value;
  }

  /** The failures a status carries when asked for them (the first max_failures). */
  public synchronized void failures(List<LoadFailure> list) {
    failures.clear();
    failures.addAll(list);
  }

  /**
   * From the status call after {@code answeredPolls} answered ones on, answers UNAVAILABLE for
   * {@code length}, as a restarting master does.
   */
  public synchronized void outage(int answeredPolls, Duration length) {
    outageAt = answeredPolls;
    outageNanos = length.toNanos();
    outageStart = -1;
  }

  /** How many status calls were answered with a status. */
  public synchronized int answeredPolls() {
    return answered;
  }

  /** A failure of one file. */
  public static LoadFailure failure(String path, String reason) {
    return LoadFailure.newBuilder().setPath(path).setReason(reason).build();
  }

  /** A status with the counts a progress display shows. */
  public static LoadJobStatus status(
      String path,
      LoadJobState state,
      long filesDone,
      long filesTotal,
      long bytesDone,
      long bytesTotal,
      long elapsedMs) {
    return LoadJobStatus.newBuilder()
        .setJobId(7)
        .setPath(path)
        .setState(state)
        .setFilesDone(filesDone)
        .setFilesTotal(filesTotal)
        .setBytesDone(bytesDone)
        .setBytesTotal(bytesTotal)
        .setListingDone(state != LoadJobState.LOAD_LISTING)
        .setElapsedMs(elapsedMs)
        .setSubmitTimeMs(1_700_000_000_000L)
        .build();
  }

  @Override
  public void submitLoad(SubmitLoadRequest r, StreamObserver<SubmitLoadResponse> out) {
    submits.add(r);
    SubmitLoadResponse answer;
    synchronized (this) {
      if (script.isEmpty()) {
        out.onError(
            Status.NOT_FOUND
                .withDescription("Path does not exist: " + r.getPath())
                .asRuntimeException());
        return;
      }
      next = 1;
      answer =
          SubmitLoadResponse.newBuilder()
              .setJob(script.get(0))
              .setAlreadyRunning(alreadyRunning)
              .build();
    }
    out.onNext(answer);
    out.onCompleted();
  }

  @Override
  public void getLoadStatus(GetLoadStatusRequest r, StreamObserver<GetLoadStatusResponse> out) {
    statusRequests.add(r);
    LoadJobStatus job;
    synchronized (this) {
      if (!hasJob(r.getPath())) {
        out.onError(noJob(r.getPath()));
        return;
      }
      if (down()) {
        out.onError(Status.UNAVAILABLE.withDescription("master is starting").asRuntimeException());
        return;
      }
      answered++;
      job = script.get(Math.min(next, script.size() - 1));
      next++;
      int n = Math.min(r.getMaxFailures(), failures.size());
      job = job.toBuilder().addAllFailures(failures.subList(0, n)).build();
    }
    out.onNext(GetLoadStatusResponse.newBuilder().setJob(job).build());
    out.onCompleted();
  }

  @Override
  public void stopLoad(StopLoadRequest r, StreamObserver<StopLoadResponse> out) {
    stops.add(r);
    LoadJobStatus job;
    synchronized (this) {
      if (!hasJob(r.getPath())) {
        out.onError(noJob(r.getPath()));
        return;
      }
      LoadJobStatus current = script.get(Math.min(next, script.size() - 1));
      job =
          current.toBuilder()
              .setState(LoadJobState.LOAD_STOPPED)
              .setEndTimeMs(current.getSubmitTimeMs() + current.getElapsedMs())
              .build();
      script.clear();
      script.add(job);
      next = 0;
    }
    out.onNext(StopLoadResponse.newBuilder().setJob(job).build());
    out.onCompleted();
  }

  private boolean hasJob(String path) {
    return !script.isEmpty() && script.get(0).getPath().equals(path);
  }

  private boolean down() {
    if (outageAt < 0 || answered < outageAt) {
      return false;
    }
    long now = System.nanoTime();
    if (outageStart < 0) {
      outageStart = now;
    }
    if (now - outageStart < outageNanos) {
      return true;
    }
    outageAt = -1;
    return false;
  }

  private static RuntimeException noJob(String path) {
    return Status.NOT_FOUND
        .withDescription(
            "No load job of "
                + path
                + " was ever submitted: start one with `strata fs load "
                + path
                + "`")
        .asRuntimeException();
  }
}
