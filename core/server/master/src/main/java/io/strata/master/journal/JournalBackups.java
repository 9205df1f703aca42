package io.strata.master.journal;

import io.strata.master.metastore.InodeStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Backups of the metastore: a copy at one applied index, written while the master serves (applies
 * wait for the copy, a RocksDB checkpoint of hard links), and the pruning of old ones.
 */
public final class JournalBackups {
  private static final Logger LOG = LoggerFactory.getLogger(JournalBackups.class);
  private static final DateTimeFormatter BACKUP_TIME =
      DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

  /** What a backup wrote. */
  public record Backup(Path dir, long index, long sequence, long inodeCount) {}

  private final InodeStore store;
  private final MasterStateMachine stateMachine;

  JournalBackups(InodeStore store, MasterStateMachine stateMachine) {
    this.store = store;
    this.stateMachine = stateMachine;
  }

  /** Writes a backup of the metastore at one applied index into a new folder under parent. */
  public Backup backup(Path parent) throws IOException {
    Files.createDirectories(parent);
    Snapshots.Found b =
        stateMachine.atAppliedIndex(
            at -> {
              Path dir =
                  parent.resolve(
                      "backup-" + LocalDateTime.now().format(BACKUP_TIME) + "-" + at.getIndex());
              return Snapshots.write(
                  store, dir, HeaderFile.BACKUP_KIND, at.getTerm(), at.getIndex());
            });
    LOG.info("Backup written to {} at index {} (sequence {})", b.dir(), b.index(), b.sequence());
    return new Backup(b.dir(), b.index(), b.sequence(), b.header().getInodeCount());
  }

  /** Removes all but the {@code retain} newest backups in {@code parent}. */
  public static void prune(Path parent, int retain) throws IOException {
    if (!Files.isDirectory(parent)) {
      return;
    }
    List<Path> backups = new ArrayList<>();
    try (Stream<Path> list = Files.list(parent)) {
      list.filter(p -> p.getFileName().toString().startsWith("backup-"))
          .sorted()
          .forEach(backups::add);
    }
    for (int i = 0; i < backups.size() - retain; i++) {
      Snapshots.deleteTree(backups.get(i));
    }
  }
}
