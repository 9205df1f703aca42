package io.strata.shell.fs;

import com.google.protobuf.ByteString;
import io.strata.client.SetAttributeOptions;
import io.strata.common.WriteTypeAttribute;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.shell.ShellContext;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs setWriteType PATH TYPE}: the write type of what is made in a folder from now on,
 * which new folders in it pass down.
 */
@Command(
    name = "setWriteType",
    description = {
      "Give a folder a write type: files and folders made in it from now on take it, and new"
          + " folders pass it down to what is made in them. It wins over the client's"
          + " strata.user.file.write.type; files and folders there already keep theirs.",
      "TYPE is CACHE_THROUGH (close waits until the bytes are in the under store and cached on"
          + " the workers reads go to), THROUGH (close waits for the under store only),"
          + " ASYNC_THROUGH (close waits for one worker's cache; the master persists the file"
          + " later) or MUST_CACHE (one worker's cache only, never the under store)."
    })
final class SetWriteTypeCommand extends FsAction {
  @Parameters(index = "0", paramLabel = "PATH")
  String path;

  @Parameters(index = "1", paramLabel = "TYPE")
  String type;

  SetWriteTypeCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    String value = type.trim().toUpperCase(Locale.ROOT);
    // The master checks it too; a master of an earlier release does not.
    String problem = WriteTypeAttribute.problem(WriteTypeAttribute.NAME + " of " + path, value);
    if (problem != null) {
      throw StrataException.invalidArgument(problem);
    }
    FileInfo f =
        fs().setAttribute(
                path,
                SetAttributeOptions.defaults()
                    .xattr(WriteTypeAttribute.NAME, ByteString.copyFromUtf8(value)));
    out().println("Write type of " + path + ": " + describe(f));
  }

  /** A path's write type as {@code fs stat} prints it, or null when it sets none. */
  static String describe(FileInfo f) {
    String set = WriteTypeAttribute.of(f.getXattrsMap());
    return set == null ? "the client's (strata.user.file.write.type)" : set;
  }
}
