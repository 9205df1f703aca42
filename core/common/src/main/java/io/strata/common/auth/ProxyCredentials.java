package io.strata.common.auth;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The S3 access keys the proxy accepts, each with its secret and the Strata user it acts as, read
 * once from a credentials file of lines {@code access-key secret-key strata-user}
 * (whitespace-separated; blank lines and lines starting with {@code #} are ignored).
 *
 * <p>An instance never changes after loading, so lookups need no lock. Files written here are
 * created with mode 0600 from their first byte and replaced by an atomic rename, so a reader sees
 * the old file or the new one, never a part, and no other local user ever can read a secret.
 * Writers are not coordinated with one another: one tool at a time edits a file.
 */
public final class ProxyCredentials {
  private static final Logger LOG = LoggerFactory.getLogger(ProxyCredentials.class);

  /** The layout of a line, for error messages. */
  public static final String LINE_FORMAT = "access-key secret-key strata-user";

  private static final String ACCESS_KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  private static final String SECRET_ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  private static final int ACCESS_KEY_LENGTH = 20;
  private static final int SECRET_LENGTH = 40;
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");

  /**
   * One access key. The secret is left out of {@link #toString()} so that logging a credential
   * never leaks it.
   */
  public record Credential(String accessKey, String secretKey, String user) {
    public Credential {
      requireToken(accessKey, "access key");
      requireToken(secretKey, "secret key");
      requireToken(user, "user");
    }

    @Override
    public String toString() {
      return "Credential[accessKey=" + accessKey + ", user=" + user + "]";
    }

    private static void requireToken(String value, String what) {
      if (value == null || value.isEmpty()) {
        throw new IllegalArgumentException("The " + what + " of a credential must not be empty");
      }
      for (int i = 0; i < value.length(); i++) {
        if (Character.isWhitespace(value.charAt(i)) || Character.isISOControl(value.charAt(i))) {
          throw new IllegalArgumentException(
              "The "
                  + what
                  + " of a credential must not contain"
                  + " spaces or control characters, as the credentials file separates fields with"
                  + " whitespace: '"
                  + (what.equals("secret key") ? "<hidden>" : value)
                  + "'");
        }
      }
    }
  }

  private final Map<String, Credential> byAccessKey;

  private ProxyCredentials(Map<String, Credential> byAccessKey) {
    this.byAccessKey = Collections.unmodifiableMap(byAccessKey);
  }

  /**
   * Reads a credentials file.
   *
   * @throws IOException when the file cannot be read, or when a line is not {@value #LINE_FORMAT}
   *     or repeats an access key (the message names the file and line)
   */
  public static ProxyCredentials load(Path file) throws IOException {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new IOException(
          "The S3 credentials file "
              + file
              + " does not exist: create it"
              + " with lines '"
              + LINE_FORMAT
              + "'",
          e);
    }
    warnIfReadableByOthers(file);
    Map<String, Credential> byKey = new LinkedHashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] fields = line.split("\\s+");
      if (fields.length != 3) {
        throw new IOException(
            file
                + ":"
                + (i + 1)
                + ": expected '"
                + LINE_FORMAT
                + "' (three fields separated by spaces) but found "
                + fields.length
                + " field"
                + (fields.length == 1 ? "" : "s"));
      }
      Credential c;
      try {
        c = new Credential(fields[0], fields[1], fields[2]);
      } catch (IllegalArgumentException e) {
        throw new IOException(file + ":" + (i + 1) + ": " + e.getMessage(), e);
      }
      if (byKey.putIfAbsent(c.accessKey(), c) != null) {
        throw new IOException(
            file
                + ":"
                + (i + 1)
                + ": access key "
                + c.accessKey()
                + " appears twice; each access key must be on one line only");
      }
    }
    return new ProxyCredentials(byKey);
  }

  /** Credentials held in memory only, for embedding and tests. */
  public static ProxyCredentials of(Collection<Credential> credentials) {
    Map<String, Credential> byKey = new LinkedHashMap<>();
    for (Credential c : credentials) {
      if (byKey.putIfAbsent(c.accessKey(), c) != null) {
        throw new IllegalArgumentException("Access key " + c.accessKey() + " appears twice");
      }
    }
    return new ProxyCredentials(byKey);
  }

  public Optional<Credential> find(String accessKey) {
    return Optional.ofNullable(byAccessKey.get(accessKey));
  }

  public int size() {
    return byAccessKey.size();
  }

  /** Every credential, in file order. */
  public List<Credential> all() {
    return List.copyOf(byAccessKey.values());
  }

  /**
   * A new credential for a user: an access key of 20 characters A-Z and 0-9 and a secret of 40
   * characters of the base64 alphabet, both from a {@link SecureRandom}, shaped as AWS keys are so
   * that clients that check the shape accept them.
   */
  public static Credential generate(String user) {
    return new Credential(
        random(ACCESS_KEY_ALPHABET, ACCESS_KEY_LENGTH),
        random(SECRET_ALPHABET, SECRET_LENGTH),
        user);
  }

  private static String random(String alphabet, int length) {
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
    }
    return sb.toString();
  }

  /**
   * Adds a credential to a file, creating the file if it does not exist. The lines already there,
   * comments included, are kept as they are.
   *
   * @throws IOException when the file holds the same access key already, or cannot be written, or
   *     its file system has no POSIX permissions
   */
  public static void append(Path file, Credential credential) throws IOException {
    List<String> lines = new ArrayList<>();
    if (Files.exists(file)) {
      ProxyCredentials existing = load(file);
      if (existing.find(credential.accessKey()).isPresent()) {
        throw new IOException(
            "Access key "
                + credential.accessKey()
                + " is already in "
                + file
                + "; generate another one");
      }
      lines.addAll(Files.readAllLines(file, StandardCharsets.UTF_8));
    } else {
      lines.add(header());
    }
    lines.add(line(credential));
    replace(file, lines);
  }

  /** Replaces a file with exactly these credentials. */
  public static void write(Path file, Collection<Credential> credentials) throws IOException {
    of(credentials); // refuses repeated access keys before anything is written
    List<String> lines = new ArrayList<>();
    lines.add(header());
    for (Credential c : credentials) {
      lines.add(line(c));
    }
    replace(file, lines);
  }

  private static String header() {
    return "# " + LINE_FORMAT;
  }

  private static String line(Credential c) {
    return c.accessKey() + " " + c.secretKey() + " " + c.user();
  }

  private static void replace(Path file, List<String> lines) throws IOException {
    Path target = file.toAbsolutePath();
    Path dir = target.getParent();
    Files.createDirectories(dir);
    if (Files.getFileAttributeView(dir, PosixFileAttributeView.class) == null) {
      throw new IOException(
          "Cannot write "
              + file
              + " safely: its file system has no POSIX"
              + " permissions to keep the secrets readable by their owner only");
    }
    FileAttribute<Set<PosixFilePermission>> ownerOnly =
        PosixFilePermissions.asFileAttribute(OWNER_ONLY);
    // Created in the target's folder so that the rename below stays on one file system and is
    // atomic; created 0600 so that no other user can open it between creation and rename.
    Path tmp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp", ownerOnly);
    try {
      StringBuilder text = new StringBuilder();
      for (String l : lines) {
        text.append(l).append('\n');
      }
      try (FileChannel ch =
          FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
        ByteBuffer buf = ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8));
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        ch.force(true);
      }
      // A umask never adds bits, but an inherited default ACL could: set the mode explicitly.
      Files.setPosixFilePermissions(tmp, OWNER_ONLY);
      try {
        Files.move(
            tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        throw new IOException("Cannot replace " + file + " atomically on its file system", e);
      }
      syncDirectory(dir);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static void syncDirectory(Path dir) {
    // Makes the rename itself durable; some platforms cannot open a folder, which is harmless.
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      LOG.debug("Could not sync folder {} after replacing a credentials file", dir, e);
    }
  }

  private static void warnIfReadableByOthers(Path file) {
    try {
      Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
      if (perms.contains(PosixFilePermission.GROUP_READ)
          || perms.contains(PosixFilePermission.OTHERS_READ)) {
        LOG.warn(
            "The S3 credentials file {} is readable by other users (mode {}): run"
                + " 'chmod 600 {}' to keep its secrets private",
            file,
            PosixFilePermissions.toString(perms),
            file);
      }
    } catch (UnsupportedOperationException | IOException e) {
      LOG.debug("Cannot read the permissions of {}", file, e);
    }
  }

  @Override
  public String toString() {
    return "ProxyCredentials[" + byAccessKey.size() + " access keys]";
  }
}
