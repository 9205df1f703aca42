package io.strata.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.server.common.FolderLock;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every tool refuses a folder whose lock a running process holds, naming that process. */
class LockedFolderTest {
  @TempDir Path tmp;

  @Test
  void toolsRefuseAFolderARunningMasterHolds() throws Exception {
    JournalFixture.standard(tmp);
    Process holder =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                LockHolder.class.getName(),
                tmp.toString())
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      assertEquals("locked", in.readLine());
      for (String[] args :
          new String[][] {
            {"dump", tmp.toString()},
            {"verify", tmp.toString()},
            {"convert", tmp.toString(), "--to-format", "1"}
          }) {
        Tool t = Tool.run(args);
        assertEquals(JournalToolsMain.IN_USE, t.code(), t::toString);
        assertTrue(
            t.err().contains("is in use by a running master (pid " + holder.pid()), t::toString);
        assertTrue(t.err().contains("copy the folder"), t::toString);
        assertTrue(t.out().isEmpty(), t::toString);
      }
    } finally {
      holder.getOutputStream().close();
      holder.waitFor(10, TimeUnit.SECONDS);
      holder.destroy();
    }
    // Once the holder is gone the lock file stays, but nothing holds it.
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(0, t.code(), t::toString);
  }

  @Test
  void probingALockThisJvmHoldsKeepsItHeld() throws Exception {
    JournalFixture.standard(tmp);
    try (FolderLock lock = FolderLock.acquire(tmp, "master journal", "strata.master.journal.dir")) {
      Tool t = Tool.run("dump", tmp.toString());
      assertEquals(JournalToolsMain.IN_USE, t.code(), t::toString);
      assertTrue(
          t.err().contains("(pid " + ProcessHandle.current().pid() + ", this process"),
          t::toString);
      // Another process still cannot take the lock: the probe did not drop it.
      Process other =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  LockHolder.class.getName(),
                  tmp.toString())
              .redirectErrorStream(true)
              .start();
      other.getOutputStream().close();
      String output = new String(other.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(other.waitFor(30, TimeUnit.SECONDS));
      assertTrue(other.exitValue() != 0 && output.contains("is in use by another process"), output);
    }
  }
}
