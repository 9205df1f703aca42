package io.strata.master.journal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The call history a snapshot carries to a master that starts from it or is sent it. */
class CallHistoryTest {
  @TempDir Path dir;

  @Test
  void aHistoryWrittenWithASnapshotIsKnownToTheMasterThatLoadsIt() throws Exception {
    CallHistory leader = new CallHistory();
    leader.record("client-a", 7);
    leader.record("client-b", 1);
    Path file = dir.resolve(CallHistory.FILE);
    leader.writeTo(file);

    CallHistory follower = new CallHistory();
    follower.record("client-c", 3);
    follower.readFrom(file);
    assertTrue(follower.wasApplied("client-a", 7));
    assertTrue(follower.wasApplied("client-b", 1));
    assertTrue(follower.wasApplied("client-c", 3), "what it knew before stays");
    assertFalse(follower.wasApplied("client-a", 8));
  }

  @Test
  void aSnapshotWithoutAHistoryAddsNothingAndAnUnknownFormatIsNamed() throws Exception {
    CallHistory h = new CallHistory();
    h.readFrom(dir.resolve("absent"));
    assertFalse(h.wasApplied("client-a", 7));

    Path future = dir.resolve("future");
    try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(future))) {
      out.writeInt(99);
      out.writeInt(0);
    }
    IOException e = assertThrows(IOException.class, () -> h.readFrom(future));
    assertTrue(e.getMessage().contains("format 99"), e.getMessage());
  }
}
