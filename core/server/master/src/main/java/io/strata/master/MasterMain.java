package io.strata.master;

import io.strata.server.common.ProcessMain;

/** Entry point of the master process: {@code java io.strata.master.MasterMain}. */
public final class MasterMain {
  private MasterMain() {}

  public static void main(String[] args) {
    ProcessMain.run(
        "master",
        conf -> {
          MasterServer server = new MasterServer(conf);
          server.exitOnJournalFailure();
          return server;
        });
  }
}
