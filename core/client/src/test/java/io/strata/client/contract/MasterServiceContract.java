package io.strata.client.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.strata.common.NameOrder;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc.FileSystemMasterBlockingStub;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.RenameRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What the client's tests rely on a master service to do, written once and run against both the
 * real master and every stand-in for it, so that a stand-in cannot drift from the service it stands
 * in for: answers and error codes of the namespace calls the client makes, and the listing order. A
 * subclass gives the service's stub; every test works in a folder of its own below the root, so one
 * service may serve them all.
 */
public abstract class MasterServiceContract {
  private static final AtomicInteger FOLDERS = new AtomicInteger();

  /** The service under test, as a client reaches it. */
  protected abstract FileSystemMasterBlockingStub master();

  /** A new, empty folder for one test. */
  private String folder() {
    String path = "/contract-" + FOLDERS.incrementAndGet() + "-" + System.nanoTime();
    mkdir(path, false, false);
    return path;
  }

  private FileInfo mkdir(String path, boolean recursive, boolean allowExists) {
    return master()
        .createDirectory(
            CreateDirectoryRequest.newBuilder()
                .setPath(path)
                .setRecursive(recursive)
                .setAllowExists(allowExists)
                .build())
        .getDirectory();
  }

  private FileInfo stat(String path) {
    return master().getStatus(GetStatusRequest.newBuilder().setPath(path).build()).getFile();
  }

  private List<String> list(String path, String startAfter) {
    List<String> names = new ArrayList<>();
    master()
        .listStatus(ListStatusRequest.newBuilder().setPath(path).setStartAfter(startAfter).build())
        .forEachRemaining(page -> page.getFilesList().forEach(f -> names.add(f.getName())));
    return names;
  }

  private static Status.Code codeOf(Executable call) {
    return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
  }

  /** Runs a call for its failure; a {@link Runnable} that javac sees as one statement. */
  @FunctionalInterface
  private interface Executable {
    void run();
  }

  @Test
  void statusOfAMissingPathIsNotFound() {
    String dir = folder();
    assertEquals(Status.Code.NOT_FOUND, codeOf(() -> stat(dir + "/missing")));
  }

  @Test
  void aDirectoryIsMadeOnceAndThenAlreadyExistsUnlessAllowed() {
    String dir = folder();
    FileInfo made = mkdir(dir + "/d", false, false);
    assertTrue(made.getDirectory());
    assertEquals("d", made.getName());
    assertEquals(dir + "/d", made.getPath());
    assertEquals(made.getFileId(), stat(dir + "/d").getFileId());
    assertEquals(Status.Code.ALREADY_EXISTS, codeOf(() -> mkdir(dir + "/d", false, false)));
    assertEquals(made.getFileId(), mkdir(dir + "/d", false, true).getFileId());
  }

  @Test
  void aMissingParentIsNotFoundUnlessRecursive() {
    String dir = folder();
    assertEquals(Status.Code.NOT_FOUND, codeOf(() -> mkdir(dir + "/a/b", false, false)));
    mkdir(dir + "/a/b", true, false);
    assertTrue(stat(dir + "/a").getDirectory());
    assertTrue(stat(dir + "/a/b").getDirectory());
  }

  @Test
  void aNewFileIsIncompleteAndTakenUnlessOverwritten() {
    String dir = folder();
    CreateFileRequest create = CreateFileRequest.newBuilder().setPath(dir + "/f").build();
    FileInfo created = master().createFile(create).getFile();
    assertFalse(created.getDirectory());
    assertFalse(created.getComplete());
    assertEquals("f", created.getName());
    assertEquals(created.getFileId(), stat(dir + "/f").getFileId());
    assertEquals(Status.Code.ALREADY_EXISTS, codeOf(() -> master().createFile(create)));
  }

  /**
   * Names in code point order, across pages: the order every listing uses ({@link NameOrder}),
   * which differs from Java's {@code String} order above U+FFFF.
   */
  @Test
  void aListingIsInNameOrderAndResumesAfterAName() {
    String dir = folder();
    List<String> names =
        new ArrayList<>(
            List.of("b", "a", "a-b", "Z", "\u00e9t\u00e9", "\uff5e", "\ud83d\ude00", "a.b"));
    for (String name : names) {
      mkdir(dir + "/" + name, false, false);
    }
    mkdir(dir + "/a/below", false, false);
    names.sort(NameOrder.COMPARATOR);
    assertEquals(names, list(dir, ""));
    assertEquals(names.subList(3, names.size()), list(dir, names.get(2)));
  }

  @Test
  void aNonEmptyDirectoryIsDeletedOnlyWithEverythingBelowIt() {
    String dir = folder();
    mkdir(dir + "/d/e", true, false);
    assertEquals(
        Status.Code.FAILED_PRECONDITION,
        codeOf(() -> master().delete(DeleteRequest.newBuilder().setPath(dir + "/d").build())));
    assertTrue(stat(dir + "/d/e").getDirectory());
    master().delete(DeleteRequest.newBuilder().setPath(dir + "/d").setRecursive(true).build());
    assertEquals(Status.Code.NOT_FOUND, codeOf(() -> stat(dir + "/d")));
    assertEquals(Status.Code.NOT_FOUND, codeOf(() -> stat(dir + "/d/e")));
    assertEquals(
        Status.Code.NOT_FOUND,
        codeOf(() -> master().delete(DeleteRequest.newBuilder().setPath(dir + "/d").build())));
  }

  @Test
  void aRenameMovesEverythingBelowAndRefusesATakenNameOrAMissingSource() {
    String dir = folder();
    mkdir(dir + "/src/child", true, false);
    mkdir(dir + "/taken", false, false);
    master().rename(rename(dir + "/src", dir + "/dst"));
    assertEquals(Status.Code.NOT_FOUND, codeOf(() -> stat(dir + "/src")));
    FileInfo child = stat(dir + "/dst/child");
    assertEquals("child", child.getName());
    assertEquals(dir + "/dst/child", child.getPath());
    assertEquals(
        Status.Code.ALREADY_EXISTS,
        codeOf(() -> master().rename(rename(dir + "/dst", dir + "/taken"))));
    assertEquals(
        Status.Code.NOT_FOUND,
        codeOf(() -> master().rename(rename(dir + "/missing", dir + "/elsewhere"))));
  }

  private static RenameRequest rename(String src, String dst) {
    return RenameRequest.newBuilder().setSrcPath(src).setDstPath(dst).build();
  }
}
