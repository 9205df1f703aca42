package io.strata.common.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.auth.ProxyCredentials.Credential;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProxyCredentialsTest {
  @TempDir Path dir;

  @Test
  void loadsLinesAndSkipsCommentsAndBlankLines() throws IOException {
    Path file = dir.resolve("s3-credentials");
    Files.writeString(
        file,
        "# access-key secret-key strata-user\n\n"
            + "AKIAFIRST0000000000A  secret/one+x   alice\n"
            + "   \t\n"
            + "  # indented comment\n"
            + "AKIASECOND000000000B\tsecret-two\tbob  \n");
    ProxyCredentials creds = ProxyCredentials.load(file);
    assertEquals(2, creds.size());
    assertEquals(
        Optional.of(new Credential("AKIAFIRST0000000000A", "secret/one+x", "alice")),
        creds.find("AKIAFIRST0000000000A"));
    assertEquals("bob", creds.find("AKIASECOND000000000B").orElseThrow().user());
    assertEquals(Optional.empty(), creds.find("AKIAMISSING"));
  }

  @Test
  void aMalformedLineNamesTheFileTheLineAndTheFormat() throws IOException {
    Path file = dir.resolve("creds");
    Files.writeString(file, "# header\nAK1 secret1 alice\nAK2 secret-without-user\n");
    IOException e = assertThrows(IOException.class, () -> ProxyCredentials.load(file));
    assertTrue(e.getMessage().contains(file + ":3"), e.getMessage());
    assertTrue(e.getMessage().contains("access-key secret-key strata-user"), e.getMessage());

    Files.writeString(file, "AK1 s1 alice\nAK1 s2 bob\n");
    IOException dup = assertThrows(IOException.class, () -> ProxyCredentials.load(file));
    assertTrue(
        dup.getMessage().contains(file + ":2") && dup.getMessage().contains("AK1"),
        dup.getMessage());

    IOException missing =
        assertThrows(IOException.class, () -> ProxyCredentials.load(dir.resolve("absent")));
    assertTrue(missing.getMessage().contains("absent"), missing.getMessage());
  }

  @Test
  void generatedKeysLookLikeAwsKeysAndDiffer() {
    Credential a = ProxyCredentials.generate("alice");
    Credential b = ProxyCredentials.generate("alice");
    assertTrue(a.accessKey().matches("[A-Z0-9]{20}"), a.accessKey());
    assertTrue(a.secretKey().matches("[A-Za-z0-9+/]{40}"), a.secretKey());
    assertEquals("alice", a.user());
    assertNotEquals(a.accessKey(), b.accessKey());
    assertNotEquals(a.secretKey(), b.secretKey());
    assertFalse(a.toString().contains(a.secretKey()), "the secret stays out of logs");
  }

  @Test
  void appendCreatesAnOwnerOnlyFileAndKeepsWhatWasThere() throws IOException {
    Path file = dir.resolve("conf").resolve("s3-credentials");
    Credential alice = ProxyCredentials.generate("alice");
    ProxyCredentials.append(file, alice);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    Files.writeString(file, Files.readString(file) + "# bob's laptop\n");

    Credential bob = ProxyCredentials.generate("bob");
    ProxyCredentials.append(file, bob);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    ProxyCredentials creds = ProxyCredentials.load(file);
    assertEquals(Optional.of(alice), creds.find(alice.accessKey()));
    assertEquals(Optional.of(bob), creds.find(bob.accessKey()));
    assertTrue(Files.readString(file).contains("# bob's laptop\n"));
    try (Stream<Path> files = Files.list(file.getParent())) {
      assertEquals(List.of(file), files.toList(), "no temporary file is left behind");
    }

    IOException dup =
        assertThrows(
            IOException.class,
            () ->
                ProxyCredentials.append(file, new Credential(alice.accessKey(), "other", "carol")));
    assertTrue(dup.getMessage().contains(alice.accessKey()), dup.getMessage());
  }

  @Test
  void writeReplacesTheFileAtomicallyWithOwnerOnlyMode() throws IOException {
    Path file = dir.resolve("creds");
    Files.writeString(file, "old content that is not even valid\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    Credential a = new Credential("AKIAAAAAAAAAAAAAAAAA", "s3cr3t", "alice");
    Credential b = new Credential("AKIABBBBBBBBBBBBBBBB", "s3cr3t2", "bob");
    ProxyCredentials.write(file, List.of(a, b));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    assertEquals(2, ProxyCredentials.load(file).size());
    assertFalse(Files.readString(file, StandardCharsets.UTF_8).contains("old content"));
    assertThrows(
        IllegalArgumentException.class,
        () -> ProxyCredentials.write(file, List.of(a, new Credential(a.accessKey(), "x", "y"))));
  }

  @Test
  void fieldsWithWhitespaceAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new Credential("AK", "a secret", "u"));
    assertThrows(IllegalArgumentException.class, () -> new Credential("AK", "s", ""));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new Credential("AK", "my secret", "u"));
    assertFalse(e.getMessage().contains("my secret"), "the secret stays out of messages");
  }
}
