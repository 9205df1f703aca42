package io.strata.journal;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code strata journal verify DIR...}: checks journal and backup folders ({@link Verifier}). */
@Command(
    name = "verify",
    mixinStandardHelpOptions = true,
    description = {
      "Checks journal folders and backup folders: every log segment (checksums, "
          + "index continuity, terms), every snapshot or backup (HEADER, format, database "
          + "checksums, inode count), and that the log after the newest snapshot replays into a "
          + "scratch copy of its database. Prints a summary; exit code 1 when anything is "
          + "damaged, each problem naming the file and the offset or index."
    })
final class VerifyCommand implements Callable<Integer> {
  @Parameters(
      arity = "1..*",
      paramLabel = "DIR",
      description = "Journal folders (strata.master.journal.dir) or backup folders.")
  List<Path> dirs;

  @Option(
      names = "--scratch",
      paramLabel = "DIR",
      description =
          "Where to put the scratch copies of databases (default: the system's "
              + "temporary folder). On the journal's file system, copies are hard links.")
  Path scratch = Path.of(System.getProperty("java.io.tmpdir"));

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    List<JournalFolder> folders = new ArrayList<>();
    for (Path dir : dirs) {
      JournalFolder folder = JournalFolder.of(dir);
      LockProbe.refuseIfInUse(folder);
      folders.add(folder);
    }
    PrintWriter out = spec.commandLine().getOut();
    Verifier verifier = new Verifier(out, scratch);
    for (JournalFolder folder : folders) {
      verifier.verify(folder);
    }
    List<String> problems = verifier.problems();
    if (problems.isEmpty()) {
      out.println("OK: no damage found");
      return JournalToolsMain.OK;
    }
    out.println("DAMAGED: " + problems.size() + (problems.size() == 1 ? " problem" : " problems"));
    for (String p : problems) {
      out.println("  " + p);
    }
    return JournalToolsMain.DAMAGED;
  }
}
