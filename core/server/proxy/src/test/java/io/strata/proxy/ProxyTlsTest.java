package io.strata.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.ssl.SslContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What strata.proxy.tls.certificate and strata.proxy.tls.key accept, and how they refuse. */
class ProxyTlsTest {
  @TempDir static Path dir;

  /** Makes a self-signed certificate and its PKCS#8 key named {@code name}-cert.pem, -key.pem. */
  static void selfSigned(String name) throws Exception {
    Process p =
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
                    "2",
                    "-subj",
                    "/CN=localhost",
                    "-keyout",
                    dir.resolve(name + "-key.pem").toString(),
                    "-out",
                    dir.resolve(name + "-cert.pem").toString()))
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(name + ".log").toFile())
            .start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "openssl finished");
    assertEquals(0, p.exitValue(), "openssl succeeded");
  }

  @BeforeAll
  static void makePairs() throws Exception {
    selfSigned("a");
    selfSigned("b");
  }

  private static String file(String name) {
    return dir.resolve(name).toString();
  }

  @Test
  void neitherKeyServesPlainHttp() {
    assertNull(ProxyTls.of("", ""));
  }

  @Test
  void certificateAndItsKeyServeTls() {
    SslContext tls = ProxyTls.of(file("a-cert.pem"), file("a-key.pem"));
    assertNotNull(tls);
    assertTrue(tls.isServer());
  }

  @Test
  void oneWithoutTheOtherNamesTheMissingKey() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ProxyTls.of(file("a-cert.pem"), ""));
    assertTrue(
        e.getMessage()
            .startsWith("strata.proxy.tls.certificate is set but strata.proxy.tls.key is empty"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> ProxyTls.of("", file("a-key.pem")));
    assertTrue(
        e.getMessage()
            .startsWith("strata.proxy.tls.key is set but strata.proxy.tls.certificate is empty"),
        e.getMessage());
  }

  @Test
  void unreadableFileNamesItsKey() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProxyTls.of(file("missing.pem"), file("a-key.pem")));
    assertTrue(e.getMessage().startsWith("strata.proxy.tls.certificate names "), e.getMessage());
    assertTrue(e.getMessage().contains("cannot be read"), e.getMessage());
  }

  @Test
  void keyOfAnotherCertificateIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProxyTls.of(file("a-cert.pem"), file("b-key.pem")));
    assertTrue(
        e.getMessage().startsWith("strata.proxy.tls.key (")
            && e.getMessage().contains("is not the private key of the certificate"),
        e.getMessage());
  }

  @Test
  void certificateGivenAsKeyIsRefusedWithTheConversion() throws Exception {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProxyTls.of(file("a-cert.pem"), file("a-cert.pem")));
    assertTrue(e.getMessage().contains("openssl pkcs8 -topk8 -nocrypt"), e.getMessage());
    Files.writeString(dir.resolve("garbage.pem"), "not a certificate\n");
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProxyTls.of(file("garbage.pem"), file("a-key.pem")));
    assertTrue(e.getMessage().contains("holds no PEM certificate"), e.getMessage());
  }
}
