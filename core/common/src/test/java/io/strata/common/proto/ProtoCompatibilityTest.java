package io.strata.common.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors.FileDescriptor;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Strata's protos against the lock of the previous release: a wire or journal change that peers of
 * that release would not survive fails the build unless allowed-changes.txt lists it.
 */
class ProtoCompatibilityTest {
  private static final String ALLOWED_CHANGES = "allowed-changes.txt";

  @Test
  void currentProtosKeepTheReleasedContract() throws Exception {
    Path lockFile = releasedLock();
    ProtoLock released =
        ProtoLock.parse(
            lockFile.getFileName().toString(), Files.readString(lockFile, StandardCharsets.UTF_8));
    AllowedChanges allowed =
        AllowedChanges.parse(
            ALLOWED_CHANGES,
            Files.readString(lockDirectory().resolve(ALLOWED_CHANGES), StandardCharsets.UTF_8));
    ProtoLock current = ProtoLock.of("current", StrataProtoFiles.all());

    ProtoLockCheck.Result result = ProtoLockCheck.compare(released, current, allowed);

    assertTrue(
        result.passed(),
        () ->
            result.describe(
                ProtoLockWriter.LOCK_DIRECTORY + "/" + lockFile.getFileName(),
                ProtoLockWriter.LOCK_DIRECTORY + "/" + ALLOWED_CHANGES));
  }

  @Test
  void lockNamesTheReleaseOfItsFileName() throws Exception {
    Path lockFile = releasedLock();
    ProtoLock released =
        ProtoLock.parse(
            lockFile.getFileName().toString(), Files.readString(lockFile, StandardCharsets.UTF_8));
    assertEquals(lockFile.getFileName().toString(), released.release() + ".lock");
  }

  @Test
  void everyProtoFileIsChecked() throws IOException {
    Set<String> sources;
    try (Stream<Path> files = Files.list(Path.of(StrataProtoFiles.SOURCE_DIRECTORY))) {
      sources =
          files
              .map(file -> "strata/" + file.getFileName())
              .filter(name -> name.endsWith(".proto"))
              .collect(Collectors.toCollection(TreeSet::new));
    }
    Set<String> checked =
        StrataProtoFiles.all().stream()
            .map(FileDescriptor::getName)
            .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(
        sources, checked, "StrataProtoFiles.all() must list the descriptor of every .proto file");
  }

  /** The one lock in the directory: a release replaces the previous lock with its own. */
  private static Path releasedLock() throws IOException, URISyntaxException {
    List<Path> locks;
    try (Stream<Path> files = Files.list(lockDirectory())) {
      locks = files.filter(file -> file.getFileName().toString().endsWith(".lock")).toList();
    }
    assertEquals(
        1,
        locks.size(),
        "expected exactly one *.lock in " + ProtoLockWriter.LOCK_DIRECTORY + ", found " + locks);
    return locks.get(0);
  }

  private static Path lockDirectory() throws URISyntaxException {
    return Path.of(ProtoCompatibilityTest.class.getResource("/proto-lock").toURI());
  }
}
