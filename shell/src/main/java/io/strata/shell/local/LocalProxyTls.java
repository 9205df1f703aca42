package io.strata.shell.local;

import io.strata.shell.UsageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The self-signed certificate and key that {@code strata local up --proxy-tls} serves the S3 proxy
 * with: made once by openssl for 127.0.0.1 and localhost (the JDK has no public API that writes a
 * certificate), kept in a folder of mode 0700, and reused by every later start so that a client
 * told to trust it keeps trusting it.
 */
final class LocalProxyTls {
  /** The certificate (PEM) and its PKCS#8 key (PEM, mode 0600). */
  record CertificateAndKey(Path certificate, Path key) {}

  private LocalProxyTls() {}

  /**
   * The pair in {@code folder}, made first when either file is missing.
   *
   * @throws UsageException when openssl is not installed or fails, saying what to do
   */
  static CertificateAndKey ensure(Path folder) throws IOException {
    Path cert = folder.resolve("cert.pem");
    Path key = folder.resolve("key.pem");
    if (Files.exists(cert) && Files.exists(key)) {
      return new CertificateAndKey(cert, key);
    }
    Files.createDirectories(folder);
    Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwx------"));
    Path log = folder.resolve("openssl.log");
    Process p;
    try {
      p =
          new ProcessBuilder(
                  List.of(
                      "openssl",
                      "req",
                      "-x509",
                      "-newkey",
                      "ec",
                      "-pkeyopt",
                      "ec_paramgen_curve:prime256v1",
                      "-nodes",
                      "-days",
                      "825",
                      "-subj",
                      "/CN=localhost",
                      "-addext",
                      "subjectAltName=IP:127.0.0.1,DNS:localhost",
                      "-keyout",
                      key.toString(),
                      "-out",
                      cert.toString()))
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
    } catch (IOException e) {
      throw new UsageException(
          "--proxy-tls makes its certificate with openssl, which cannot be run ("
              + e.getMessage()
              + "): install openssl (bin/setup does) or give strata.proxy.tls.certificate and"
              + " strata.proxy.tls.key yourself");
    }
    boolean done;
    try {
      done = p.waitFor(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      throw new IOException("interrupted while openssl made " + cert, e);
    }
    if (!done || p.exitValue() != 0) {
      p.destroyForcibly();
      Files.deleteIfExists(cert);
      Files.deleteIfExists(key);
      throw new UsageException(
          "openssl could not make the proxy's certificate in " + folder + "; see " + log);
    }
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    return new CertificateAndKey(cert, key);
  }
}
