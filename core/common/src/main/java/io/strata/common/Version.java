package io.strata.common;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** Release and format versions that processes write into journals and exchange over RPC. */
public final class Version {
  /** The release of this build, from the Maven project version. */
  public static final String RELEASE = loadRelease();
  /** Format of journal segments and checkpoints this release writes. */
  public static final int JOURNAL_FORMAT_VERSION = 1;
  /** Version of the RPC contract; a worker sends it when it registers. */
  public static final int RPC_PROTOCOL_VERSION = 1;

  private Version() {}

  private static String loadRelease() {
    try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        return "unknown";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("release", "unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }
}
