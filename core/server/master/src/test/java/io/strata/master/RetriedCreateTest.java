package io.strata.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.strata.common.rpc.MasterHeaders;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.ListStatusRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A create whose first attempt made its folder in the under store and then lost its journal entry
 * with a failed leader: the retry, finding the folder in the store and no record of its call, takes
 * it as its own result; a first attempt that finds the same gets "already exists", as POSIX asks.
 */
class RetriedCreateTest {
  @TempDir Path home;

  private static FileSystemMasterGrpc.FileSystemMasterBlockingStub attempt(
      TestMaster m, long callId, int attempt) {
    Metadata headers = new Metadata();
    headers.put(MasterHeaders.CLIENT_ID, "client-r");
    headers.put(MasterHeaders.CALL_ID, Long.toString(callId));
    if (attempt > 1) {
      headers.put(MasterHeaders.CALL_ATTEMPT, Integer.toString(attempt));
    }
    return m.fs.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
  }

  private static CreateDirectoryRequest mkdir(String path) {
    return CreateDirectoryRequest.newBuilder().setPath(path).build();
  }

  @Test
  void aRetriedMkdirTakesTheFolderItsEarlierAttemptLeftInTheStore() throws Exception {
    Files.createDirectories(home.resolve("ufs/changes"));
    // Every access checks the store, so a name missing from the namespace is looked up there.
    try (TestMaster m =
        TestMaster.start(home, Map.of("strata.master.ufs.sync.interval", "always"))) {
      m.fs
          .listStatus(ListStatusRequest.newBuilder().setPath("/changes").build())
          .forEachRemaining(r -> {});
      // What the lost attempts left: folders in the store that the namespace never journaled.
      Files.createDirectory(home.resolve("ufs/changes/c1"));
      Files.createDirectory(home.resolve("ufs/changes/c2"));

      FileInfo retried = attempt(m, 1, 2).createDirectory(mkdir("/changes/c1")).getDirectory();
      assertEquals("/changes/c1", retried.getPath());
      assertTrue(retried.getDirectory());
      assertEquals(retried.getFileId(), m.stat("/changes/c1").getFileId());

      StatusRuntimeException first =
          assertThrows(
              StatusRuntimeException.class,
              () -> attempt(m, 2, 1).createDirectory(mkdir("/changes/c2")));
      assertEquals(Status.Code.ALREADY_EXISTS, first.getStatus().getCode(), first.toString());

      // A retry of a call whose path the namespace already held is no call's leftover.
      StatusRuntimeException held =
          assertThrows(
              StatusRuntimeException.class,
              () -> attempt(m, 3, 2).createDirectory(mkdir("/changes/c1")));
      assertEquals(Status.Code.ALREADY_EXISTS, held.getStatus().getCode(), held.toString());
    }
  }
}
