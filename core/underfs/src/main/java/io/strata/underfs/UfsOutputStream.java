package io.strata.underfs;

import java.io.IOException;
import java.io.OutputStream;

/**
 * A file being written to an under store. Bytes become visible under the final name only when
 * {@link #close()} succeeds; {@link #abort()} discards everything written.
 */
public abstract class UfsOutputStream extends OutputStream {
  /** Discards the partial file; the final name is left as it was. */
  public abstract void abort() throws IOException;

  /** The fingerprint of the completed file; valid after a successful close. */
  public abstract String fingerprint();
}
