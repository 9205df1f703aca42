package io.strata.journal;

import io.strata.common.Version;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code strata journal}: offline tools for a master's journal folder or a backup folder. */
@Command(
    name = "journal",
    mixinStandardHelpOptions = true,
    versionProvider = JournalCommand.ReleaseVersion.class,
    description = {
      "Offline tools for a master's journal folder (strata.master.journal.dir) or a "
          + "backup folder. They refuse a folder a running master holds: stop the master or copy "
          + "the folder first.",
      "",
      "Exit codes: 0 done, no damage; 1 damage found or a file unreadable; 2 usage error; "
          + "3 folder in use by a running master; 4 conversion refused."
    },
    subcommands = {DumpCommand.class, VerifyCommand.class, ConvertCommand.class})
final class JournalCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return JournalToolsMain.USAGE;
  }

  /** The release of this build for {@code --version}. */
  static final class ReleaseVersion implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {
        "Strata "
            + Version.RELEASE
            + ", metadata layouts "
            + Version.FIRST_LAYOUT_VERSION
            + " to "
            + Version.LAYOUT_VERSION
      };
    }
  }
}
