package io.strata.shell.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The certificate of {@code strata local up --proxy-tls}: made once, for 127.0.0.1 and localhost.
 */
class LocalProxyTlsTest {
  @TempDir Path home;

  @Test
  void certificateNamesTheLocalAddressesAndIsKeptAcrossStarts() throws Exception {
    Path folder = home.resolve("conf/proxy-tls");
    LocalProxyTls.CertificateAndKey first = LocalProxyTls.ensure(folder);
    assertEquals(folder.resolve("cert.pem"), first.certificate());
    assertEquals(folder.resolve("key.pem"), first.key());
    assertEquals(
        "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(first.key())));
    assertTrue(Files.readString(first.key()).contains("-----BEGIN PRIVATE KEY-----"));
    X509Certificate cert;
    try (InputStream in = Files.newInputStream(first.certificate())) {
      cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    List<String> names =
        cert.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))).toList();
    assertTrue(names.containsAll(List.of("127.0.0.1", "localhost")), names.toString());

    byte[] certBytes = Files.readAllBytes(first.certificate());
    LocalProxyTls.CertificateAndKey second = LocalProxyTls.ensure(folder);
    assertEquals(first, second);
    assertArrayEquals(certBytes, Files.readAllBytes(second.certificate()), "the same certificate");
  }
}
