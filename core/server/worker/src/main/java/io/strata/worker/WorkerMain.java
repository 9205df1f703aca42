package io.strata.worker;

import io.strata.server.common.ProcessMain;

/** Starts a worker process from the configuration of this host. */
public final class WorkerMain {
  private WorkerMain() {}

  public static void main(String[] args) {
    ProcessMain.run("worker", WorkerServer::new);
  }
}
