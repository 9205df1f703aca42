package io.strata.master;

import io.strata.client.contract.MasterServiceContract;
import io.strata.proto.FileSystemMasterGrpc.FileSystemMasterBlockingStub;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real master keeps the contract the client's stand-in master is held to (the same tests run
 * against both), so that the stand-in's answers are the master's.
 */
class MasterContractTest extends MasterServiceContract {
  @TempDir static Path home;
  private static TestMaster master;

  @BeforeAll
  static void start() throws Exception {
    master = TestMaster.start(home);
  }

  @AfterAll
  static void stop() throws Exception {
    master.close();
  }

  @Override
  protected FileSystemMasterBlockingStub master() {
    return master.fs;
  }
}
