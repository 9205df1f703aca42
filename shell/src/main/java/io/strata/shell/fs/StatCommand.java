package io.strata.shell.fs;

import io.strata.client.SyncOption;
import io.strata.common.WriteTypeAttribute;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import io.strata.proto.PersistenceState;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import java.io.PrintStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs stat [--sync] PATH}: every attribute of one path, one per line; with {@code
 * --sync} as the under store has it now.
 */
@Command(name = "stat", description = "Show the status of a file or directory.")
final class StatCommand extends FsAction {
  @Option(
      names = "--sync",
      description = "Check the under store first and take in what " + "changed there.")
  boolean sync;

  @Parameters(paramLabel = "PATH")
  String path;

  StatCommand(ShellContext ctx) {
    super(ctx);
  }

  /** What kind of file a status describes, in words. */
  static String typeName(FileInfo f) {
    if (f.getDirectory()) {
      return "directory";
    }
    return switch (f.getFileType()) {
      case FILE_TYPE_SYMLINK -> "symbolic link";
      case FILE_TYPE_FIFO -> "FIFO (named pipe)";
      case FILE_TYPE_SOCKET -> "socket";
      case FILE_TYPE_CHAR_DEVICE -> "character device";
      case FILE_TYPE_BLOCK_DEVICE -> "block device";
      default -> "file";
    };
  }

  @Override
  void run() throws StrataException {
    FileInfo f = fs().getStatus(path, sync ? SyncOption.ALWAYS : SyncOption.DEFAULT);
    PrintStream o = out();
    o.printf("Path:        %s%n", f.getPath());
    o.printf("Type:        %s%n", typeName(f));
    if (f.getFileType() == FileType.FILE_TYPE_SYMLINK) {
      o.printf("Target:      %s%n", f.getSymlinkTarget());
    } else if (f.getFileType() == FileType.FILE_TYPE_CHAR_DEVICE
        || f.getFileType() == FileType.FILE_TYPE_BLOCK_DEVICE) {
      o.printf("Device:      %s%n", Devices.text(f.getRdev()));
    }
    if (!f.getDirectory() && f.getFileType() == FileType.FILE_TYPE_PLAIN) {
      o.printf("Size:        %d (%s)%n", f.getLength(), Format.human(f.getLength()));
      o.printf("Blocks:      %d of %s%n", f.getBlockCount(), Format.human(f.getBlockSize()));
      o.printf(
          "Cached:      %d (%s)%n",
          f.getCachedBytes(), Format.percent(f.getCachedBytes(), f.getLength()));
      o.printf("Complete:    %s%n", f.getComplete() ? "yes" : "no (being written)");
      o.printf("Persisted:   %s%n", Listing.persistence(f));
    }
    o.printf("Mode:        %s (%04o)%n", Format.mode(f), f.getMode());
    if (f.getLinkCount() > 0) {
      o.printf("Links:       %d%n", f.getLinkCount());
    }
    o.printf("Owner:       %s%n", f.getOwner());
    o.printf("Group:       %s%n", f.getGroup());
    o.printf("Modified:    %s%n", Format.time(f.getModificationTimeMs()));
    if (f.hasChangeTimeNs()) {
      o.printf("Changed:     %s%n", Format.time(f.getChangeTimeNs() / 1_000_000L));
    }
    if (f.hasAccessTimeNs()) {
      o.printf("Accessed:    %s%n", Format.time(f.getAccessTimeNs() / 1_000_000L));
    }
    if (f.getTtlMs() > 0) {
      o.printf("TTL:         %s%n", SetTtlCommand.describe(f));
    }
    if (WriteTypeAttribute.of(f.getXattrsMap()) != null) {
      o.printf("Write type:  %s%n", SetWriteTypeCommand.describe(f));
    }
    if (f.getInodeNumber() != 0 && f.getInodeNumber() != f.getFileId()) {
      o.printf("Inode:       %d%n", f.getInodeNumber());
    }
    o.printf("File id:     %d%n", f.getFileId());
    o.printf(
        "Under store: %s (mount %d)%s%n",
        f.getUfsPath(),
        f.getMountId(),
        !f.getNamespaceOnly()
            ? ""
            : f.getPersistenceState() != PersistenceState.PERSISTENCE_PERSISTED
                ? ", not held there yet: its content is in Strata's cache only"
                : ", not held there: the store cannot hold this kind of file, so it lives in"
                    + " Strata's namespace only");
    if (!f.getUfsFingerprint().isEmpty()) {
      o.printf("Fingerprint: %s%n", f.getUfsFingerprint());
    }
  }
}
