package io.strata.proxy;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.strata.common.conf.ProxyKeys;
import io.strata.common.conf.StrataConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;

/**
 * The TLS context of the S3 port, from strata.proxy.tls.certificate and strata.proxy.tls.key: none
 * when both are empty, else one that serves TLS 1.2 and 1.3 with the JDK's provider. Everything
 * that would make the first handshake fail (a key without a certificate, a file that cannot be read
 * or parsed, a key that is not the certificate's) is found here, at start-up, and reported as one
 * line naming the key and what to do.
 */
final class ProxyTls {
  private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String KEY_END = "-----END PRIVATE KEY-----";

  private ProxyTls() {}

  /** The context the configuration asks for, or null for plain HTTP. */
  static SslContext fromConfig(StrataConfig conf) {
    return of(
        conf.getString(ProxyKeys.TLS_CERTIFICATE).trim(), conf.getString(ProxyKeys.TLS_KEY).trim());
  }

  /**
   * The context of a certificate chain file and its key file, or null when both are empty.
   *
   * @throws IllegalArgumentException naming the key to fix when the pair cannot serve
   */
  static SslContext of(String certificate, String key) {
    String certKey = ProxyKeys.TLS_CERTIFICATE.name();
    String keyKey = ProxyKeys.TLS_KEY.name();
    if (certificate.isEmpty() && key.isEmpty()) {
      return null;
    }
    if (certificate.isEmpty() || key.isEmpty()) {
      String missing = certificate.isEmpty() ? certKey : keyKey;
      String given = certificate.isEmpty() ? keyKey : certKey;
      throw new IllegalArgumentException(
          given
              + " is set but "
              + missing
              + " is empty: set both (PEM certificate chain and its PKCS#8 private key) to serve"
              + " HTTPS, or neither to serve HTTP");
    }
    X509Certificate cert = readCertificate(Path.of(certificate), certKey);
    PrivateKey privateKey = readKey(Path.of(key), keyKey, cert.getPublicKey().getAlgorithm());
    if (!belongTogether(cert, privateKey)) {
      throw new IllegalArgumentException(
          keyKey
              + " ("
              + key
              + ") is not the private key of the certificate in "
              + certKey
              + " ("
              + certificate
              + "): give the key the certificate was made for");
    }
    try {
      return SslContextBuilder.forServer(Path.of(certificate).toFile(), Path.of(key).toFile())
          .sslProvider(SslProvider.JDK)
          .protocols("TLSv1.3", "TLSv1.2")
          .build();
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException(
          certKey
              + " and "
              + keyKey
              + " cannot serve TLS: "
              + e.getMessage()
              + "; give a PEM certificate chain and its unencrypted PKCS#8 key",
          e);
    }
  }

  private static X509Certificate readCertificate(Path file, String configKey) {
    try (InputStream in = Files.newInputStream(file)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          configKey + " names " + file + ", which cannot be read: " + e + "; give a readable file",
          e);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(
          configKey
              + " names "
              + file
              + ", which holds no PEM certificate (-----BEGIN CERTIFICATE-----): "
              + e.getMessage(),
          e);
    }
  }

  private static PrivateKey readKey(Path file, String configKey, String algorithm) {
    String pem;
    try {
      pem = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          configKey + " names " + file + ", which cannot be read: " + e + "; give a readable file",
          e);
    }
    int begin = pem.indexOf(KEY_BEGIN);
    int end = pem.indexOf(KEY_END);
    if (begin < 0 || end < begin) {
      throw new IllegalArgumentException(
          configKey
              + " names "
              + file
              + ", which holds no unencrypted PKCS#8 key ("
              + KEY_BEGIN
              + "); convert one with `openssl pkcs8 -topk8 -nocrypt -in KEY -out "
              + file.getFileName()
              + "`");
    }
    try {
      byte[] der = Base64.getMimeDecoder().decode(pem.substring(begin + KEY_BEGIN.length(), end));
      return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
    } catch (IllegalArgumentException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          configKey
              + " names "
              + file
              + ", which holds no "
              + algorithm
              + " key as the certificate's is: "
              + e.getMessage()
              + "; give the key the certificate was made for",
          e);
    }
  }

  /** Whether a signature made with the key verifies with the certificate's public key. */
  private static boolean belongTogether(X509Certificate cert, PrivateKey key) {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          case "Ed25519", "Ed448", "EdDSA" -> key.getAlgorithm();
          default -> null;
        };
    if (algorithm == null) {
      // A key type with no signature check here: the handshake is the check.
      return true;
    }
    try {
      byte[] probe = "strata-proxy-tls".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(cert.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }
}
