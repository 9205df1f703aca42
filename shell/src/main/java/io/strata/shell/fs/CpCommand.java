package io.strata.shell.fs;

import io.strata.common.error.StrataException;
import io.strata.shell.ShellContext;
import io.strata.shell.UsageException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs cp [-R] [-f] SRC DST}: copies between Strata and this machine in either
 * direction, or within one side. A DST that is an existing directory receives SRC under its own
 * name. A file whose copy fails is removed, never left half-written.
 */
@Command(
    name = "cp",
    description = {
      "Copy files and directories.",
      "A path written local:/abs/path or file:///abs/path is on this machine; any other path is a"
          + " Strata path. Examples:",
      "  strata fs cp local:/data/train.tar /datasets/",
      "  strata fs cp -R /datasets/imagenet file:///scratch/imagenet"
    })
final class CpCommand extends FsAction {
  @Option(names = "-R", description = "Copy directories recursively.")
  boolean recursive;

  @Option(names = "-f", description = "Overwrite existing files.")
  boolean force;

  @Parameters(index = "0", paramLabel = "SRC")
  String src;

  @Parameters(index = "1", paramLabel = "DST")
  String dst;

  CpCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws IOException {
    Place from = Place.parse(src, fs());
    Place to = Place.parse(dst, fs());
    if (!from.exists()) {
      throw StrataException.notFound(from.display());
    }
    if (to.exists() && to.isDirectory()) {
      to = to.child(from.name());
    }
    if (from.isDirectory()) {
      if (!recursive) {
        throw new UsageException(from.display() + " is a directory (use cp -R)");
      }
      if (to.isInside(from)) {
        throw new UsageException(
            "Cannot copy " + from.display() + " into itself (" + to.display() + ")");
      }
      copyTree(from, to);
    } else {
      copyFile(from, to);
    }
  }

  private void copyTree(Place from, Place to) throws IOException {
    to.mkdir();
    for (String name : from.childNames()) {
      Place child = from.child(name);
      if (child.isDirectory()) {
        copyTree(child, to.child(name));
      } else {
        copyFile(child, to.child(name));
      }
    }
  }

  /**
   * Copies one file. A copy that fails because the worker taking its bytes is away (killed,
   * restarting) is made again from the start of the source, which is read again, for up to
   * strata.client.write.retry.duration, as the mount's writes are; each failed attempt leaves
   * nothing behind.
   */
  private void copyFile(Place from, Place to) throws IOException {
    fs().writeRetrying(
            () -> {
              copyOnce(from, to);
              return null;
            });
  }

  private void copyOnce(Place from, Place to) throws IOException {
    try (InputStream in = from.open()) {
      Place.Sink sink = to.create(force);
      boolean done = false;
      try {
        OutputStream out = sink.stream();
        byte[] buf = new byte[1 << 20];
        int n;
        while ((n = in.read(buf)) > 0) {
          out.write(buf, 0, n);
        }
        out.close();
        done = true;
      } finally {
        if (!done) {
          sink.discard();
        }
      }
    }
  }
}
