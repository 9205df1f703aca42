package io.strata.common.proto;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes the lock of the current protos, to run at a release from the release commit: {@code
 * ProtoLockWriter RELEASE [OUTPUT_FILE]} (standard output without a file). The command line is in
 * the header of the lock it writes.
 */
public final class ProtoLockWriter {
  static final String LOCK_DIRECTORY = "core/common/src/test/resources/proto-lock";

  private ProtoLockWriter() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: ProtoLockWriter RELEASE [OUTPUT_FILE]");
      System.exit(2);
    }
    String release = args[0];
    String text = header(release) + ProtoLock.of(release, StrataProtoFiles.all()).format();
    if (args.length == 2) {
      Files.writeString(Path.of(args[1]), text, StandardCharsets.UTF_8);
    } else {
      System.out.print(text);
    }
  }

  static String header(String release) {
    return String.join(
        "\n",
        "# Strata protocol lock of release " + release + ": every message field, enum value,",
        "# reserved number and service method of core/common/src/main/proto/strata/*.proto as",
        "# released. ProtoCompatibilityTest fails the build when the current protos break any of",
        "# them; deliberate breaks go in allowed-changes.txt (docs/proto-compatibility.md).",
        "# Generated, do not edit. At the next release, from the release commit, replace it:",
        "#   mvn -o -q -B -pl core/common test-compile dependency:build-classpath \\",
        "#     -Dmdep.includeScope=test -Dmdep.outputFile=target/test.classpath",
        "#   java -cp core/common/target/test-classes:core/common/target/classes:$(cat"
            + " core/common/target/test.classpath) \\",
        "#     io.strata.common.proto.ProtoLockWriter vX.Y.Z " + LOCK_DIRECTORY + "/vX.Y.Z.lock",
        "#   git rm " + LOCK_DIRECTORY + "/" + release + ".lock",
        "# and empty allowed-changes.txt: the new lock holds its breaks.",
        "");
  }
}
