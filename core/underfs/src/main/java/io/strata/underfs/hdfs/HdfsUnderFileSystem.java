package io.strata.underfs.hdfs;

import io.strata.common.error.StrataException;
import io.strata.underfs.UfsFileType;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An under store on HDFS, addressed as {@code hdfs://namenode:port/path} (or {@code
 * hdfs://nameservice/path} for an HA nameservice described by the mount's config files). One
 * instance talks to one namenode with its own Hadoop client (never Hadoop's shared cache of
 * clients), configured by the mount's {@link HdfsOptions}, and acts as one user.
 *
 * <p>Names are kept verbatim: spaces, '#', '%' and non-ASCII names reach HDFS as they are. Reads
 * are positioned and served by a bounded cache of open streams that is checked against the file's
 * current status on every read (see {@link #read}). Writes appear under their name only when
 * complete (see {@link HdfsOutputStream}). Failures an operator must act on become {@link
 * io.strata.common.error.StrataException}s naming the namenode, path and fix (see {@link
 * HdfsErrors}). Safe for concurrent use by many threads.
 *
 * <p>Besides files and directories it holds symbolic links, where the cluster allows them: Hadoop
 * leaves them disabled (they are enabled only in tests), and a refusal becomes an {@link
 * UnsupportedOperationException}, so Strata keeps the link in its own namespace. Links already in
 * HDFS are reported as links with their target, as every store reports them. HDFS has no hard
 * links, FIFOs, sockets or device nodes.
 */
public final class HdfsUnderFileSystem implements UnderFileSystem {
  private static final Logger LOG = LoggerFactory.getLogger(HdfsUnderFileSystem.class);

  public static final String SCHEME = "hdfs";

  /** Marker in the names of in-progress writes; such files are hidden from listings. */
  static final String TEMP_MARKER = UnderFileSystem.TEMP_MARKER;

  /** Characters of a target's name a temporary name begins with, so it stays within 255 bytes. */
  private static final int TEMP_NAME_PREFIX = 40;

  /** The start of a name, short enough for a temporary name built on it. */
  static String namePrefix(String name) {
    return name.length() > TEMP_NAME_PREFIX ? name.substring(0, TEMP_NAME_PREFIX) : name;
  }

  private final String namenode;
  private final String prefix;
  private final String user;
  private final Configuration conf;
  private final DistributedFileSystem fs;
  private final HdfsErrors errors;
  private final InputStreamCache streams;

  private HdfsUnderFileSystem(
      String namenode, String user, Configuration conf, DistributedFileSystem fs) {
    this.namenode = namenode;
    this.prefix = SCHEME + "://" + namenode;
    this.user = user;
    this.conf = conf;
    this.fs = fs;
    this.errors = new HdfsErrors(namenode, user);
    this.streams = new InputStreamCache(fs);
  }

  /**
   * Opens the store of the namenode named by {@code uri}'s authority. No namenode call is made
   * here, so a namenode that is down fails the first operation, not the mount.
   *
   * @throws IllegalArgumentException when the URI has no namenode address
   */
  public static HdfsUnderFileSystem open(String uri, HdfsOptions options) throws IOException {
    String namenode = authorityOf(uri);
    URI root;
    try {
      root = new URI(SCHEME + "://" + namenode + "/");
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "Not a namenode address or nameservice: '"
              + namenode
              + "' in "
              + uri
              + " (expected hdfs://namenode:port/path)",
          e);
    }
    Configuration conf = options.toConfiguration();
    String user =
        options.user().isEmpty()
            ? UserGroupInformation.getCurrentUser().getShortUserName()
            : options.user();
    FileSystem opened;
    try {
      opened =
          options.user().isEmpty()
              ? FileSystem.newInstance(root, conf)
              : FileSystem.newInstance(root, conf, options.user());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while opening HDFS at " + namenode);
    } catch (IllegalArgumentException e) {
      if (e.getCause() instanceof UnknownHostException) {
        // An unresolvable namenode host surfaces as an IllegalArgumentException.
        throw new HdfsErrors(namenode, user)
            .translate(new IOException(e.getMessage(), e), uri, "open");
      }
      throw new IllegalArgumentException("Cannot open HDFS at " + uri + ": " + e.getMessage(), e);
    }
    if (!(opened instanceof DistributedFileSystem dfs)) {
      String type = opened.getClass().getName();
      opened.close();
      throw new IllegalArgumentException(
          "fs.hdfs.impl makes "
              + uri
              + " a "
              + type
              + ", not an HDFS client; remove that setting from the mount's options or files");
    }
    LOG.info(
        "Opened HDFS under store {} as user {} ({} config files)",
        root,
        user,
        options.configFiles().size());
    return new HdfsUnderFileSystem(namenode, user, conf, dfs);
  }

  /** The namenode address or nameservice of an {@code hdfs://} URI. */
  static String authorityOf(String uri) {
    String head = SCHEME + "://";
    if (!uri.regionMatches(true, 0, head, 0, head.length())) {
      throw new IllegalArgumentException(
          "Not an HDFS URI: " + uri + " (expected hdfs://namenode:port/path)");
    }
    String rest = uri.substring(head.length());
    int slash = rest.indexOf('/');
    String authority = slash < 0 ? rest : rest.substring(0, slash);
    if (authority.isEmpty()) {
      throw new IllegalArgumentException(
          "HDFS URI "
              + uri
              + " names no namenode: use "
              + "hdfs://namenode:port/path, or hdfs://nameservice/path with the nameservice's "
              + "hdfs-site.xml in "
              + HdfsOptions.CONFIG_FILES);
    }
    return authority;
  }

  @Override
  public String scheme() {
    return SCHEME;
  }

  /** The Hadoop configuration of this store's client. */
  Configuration configuration() {
    return conf;
  }

  /** The cache of open input streams, for tests. */
  InputStreamCache streams() {
    return streams;
  }

  /**
   * The Hadoop path of a store URI. It is built from its parts, never parsed as a URI, so that
   * names with spaces, '#' or '%' stay the names they are.
   */
  Path toPath(String uri) {
    if (!uri.regionMatches(true, 0, prefix, 0, prefix.length())) {
      throw new IllegalArgumentException("Not a path of the HDFS store " + prefix + ": " + uri);
    }
    String path = uri.substring(prefix.length());
    if (path.isEmpty()) {
      path = "/";
    }
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException("Not a path of the HDFS store " + prefix + ": " + uri);
    }
    return new Path(SCHEME, namenode, path);
  }

  /**
   * The status of an entry as a listing or a status call on a non-link gives it, with its own name;
   * a link's target is taken from it as the namenode stored it.
   */
  static UfsStatus toStatus(FileStatus s) throws IOException {
    return toStatus(s, s.getPath().getName(), s.isSymlink() ? s.getSymlink().toString() : "");
  }

  /**
   * The status of an entry, under {@code name}.
   *
   * @param target the link's target text when {@code s} is a symbolic link
   */
  static UfsStatus toStatus(FileStatus s, String name, String target) {
    int mode = s.getPermission().toShort() & 0777;
    String owner = Objects.toString(s.getOwner(), "");
    String group = Objects.toString(s.getGroup(), "");
    if (s.isSymlink()) {
      // The length lstat would give: the target's bytes (HDFS itself reports 0).
      return new UfsStatus(
          name,
          false,
          target.getBytes(StandardCharsets.UTF_8).length,
          s.getModificationTime(),
          mode,
          owner,
          group,
          "link:" + target,
          UfsFileType.SYMLINK,
          target,
          0);
    }
    return new UfsStatus(
        name,
        s.isDirectory(),
        s.isDirectory() ? 0 : s.getLen(),
        s.getModificationTime(),
        mode,
        owner,
        group,
        fingerprint(s));
  }

  /**
   * Length and modification time. Nothing cheaper notices changes reliably: HDFS files change only
   * by being replaced, appended to or truncated, and each of these moves the mtime or the length.
   * The HDFS file checksum would be exact but reads the checksums of every block from the
   * datanodes, far too expensive for a stat.
   */
  static String fingerprint(FileStatus s) {
    return s.isDirectory() ? "" : s.getLen() + ":" + s.getModificationTime();
  }

  /**
   * The entry itself (getFileLinkStatus, one namenode call). A link's target costs a second call:
   * the status qualifies it into an absolute URI, and the text as stored is wanted.
   */
  @Override
  public UfsStatus getStatus(String uri) throws IOException {
    Path path = toPath(uri);
    try {
      FileStatus s = fs.getFileLinkStatus(path);
      return toStatus(s, path.getName(), s.isSymlink() ? fs.getLinkTarget(path).toString() : "");
    } catch (IOException e) {
      throw errors.translate(e, uri, "get the status of");
    }
  }

  /** What the path leads to, links followed by the Hadoop client, under the path's name. */
  @Override
  public UfsStatus getTargetStatus(String uri) throws IOException {
    Path path = toPath(uri);
    try {
      return toStatus(fs.getFileStatus(path), path.getName(), "");
    } catch (IOException e) {
      throw errors.translate(e, uri, "get the status of");
    }
  }

  /** Whether the entry is there; a dangling symbolic link is. */
  @Override
  public boolean exists(String uri) throws IOException {
    Path path = toPath(uri);
    try {
      fs.getFileLinkStatus(path);
      return true;
    } catch (FileNotFoundException e) {
      return false;
    } catch (IOException e) {
      throw errors.translate(e, uri, "check the existence of");
    }
  }

  @Override
  public CloseableIterator<UfsStatus> list(String uri) throws IOException {
    Path dir = toPath(uri);
    FileStatus status;
    try {
      status = fs.getFileStatus(dir);
    } catch (IOException e) {
      throw errors.translate(e, uri, "list");
    }
    if (!status.isDirectory()) {
      throw new IOException("Not a directory in HDFS namenode " + namenode + ": " + uri);
    }
    try {
      return new HdfsListing(fs.listStatusIterator(dir), errors, uri);
    } catch (IOException e) {
      throw errors.translate(e, uri, "list");
    }
  }

  /**
   * Reads exactly the asked range with a positioned read on a cached stream. Every read first asks
   * the namenode for the file's status (getFileInfo: a lookup under the namenode's read lock,
   * cheaper than the getBlockLocations that opening costs) and uses the cached stream only if it
   * was opened on that same version of the file, so a file replaced, appended to or truncated
   * behind Strata's back is never served from an old stream. A read that fails on a cached stream
   * (its blocks were deleted with a replaced file, or it was evicted meanwhile) drops it and is
   * tried once more on a freshly opened stream.
   */
  @Override
  public int read(String uri, long position, byte[] buffer, int offset, int length)
      throws IOException {
    Objects.checkFromIndexSize(offset, length, buffer.length);
    return read(uri, position, ByteBuffer.wrap(buffer, offset, length));
  }

  /**
   * As the array form, into {@code dst}. A direct buffer is filled with the stream's positioned
   * ByteBuffer read where it has one ({@code in:preadbytebuffer}, HDFS clients of Hadoop 3.3 and
   * later), without a copy; else with one positioned read into a heap array of the range. A heap
   * buffer is read into its own array.
   */
  @Override
  public int read(String uri, long position, ByteBuffer dst) throws IOException {
    if (position < 0) {
      throw new IllegalArgumentException("Negative read position " + position + " in " + uri);
    }
    Path path = toPath(uri);
    int start = dst.position();
    int limit = dst.limit();
    try {
      for (int attempt = 1; ; attempt++) {
        FileStatus status = fs.getFileStatus(path);
        if (status.isDirectory()) {
          throw new IOException("it is a directory");
        }
        if (limit == start) {
          return 0;
        }
        if (position >= status.getLen()) {
          return -1;
        }
        int wanted = (int) Math.min(limit - start, status.getLen() - position);
        InputStreamCache.OpenFile open = streams.open(path, status);
        try {
          dst.limit(start + wanted);
          return readRange(open.in, position, dst);
        } catch (IOException e) {
          streams.discard(path, open);
          if (attempt >= 2) {
            throw e;
          }
          dst.position(start);
          LOG.debug(
              "Read of {} at {} failed ({}); retrying on a new stream",
              uri,
              position,
              e.toString());
        } finally {
          dst.limit(limit);
        }
      }
    } catch (IOException e) {
      throw errors.translate(e, uri, "read");
    }
  }

  /** Fills {@code dst} up to its limit or the end of the file; -1 when nothing was read. */
  static int readRange(FSDataInputStream in, long position, ByteBuffer dst) throws IOException {
    int wanted = dst.remaining();
    int done = 0;
    if (dst.hasArray()) {
      done = readArray(in, position, dst.array(), dst.arrayOffset() + dst.position(), wanted);
      dst.position(dst.position() + done);
    } else if (in.hasCapability(StreamCapabilities.PREADBYTEBUFFER)) {
      while (done < wanted) {
        int n = in.read(position + done, dst);
        if (n < 0) {
          break;
        }
        done += n;
      }
    } else {
      byte[] heap = new byte[wanted];
      done = readArray(in, position, heap, 0, wanted);
      dst.put(heap, 0, done);
    }
    return done == 0 ? -1 : done;
  }

  private static int readArray(
      FSDataInputStream in, long position, byte[] buffer, int offset, int wanted)
      throws IOException {
    int done = 0;
    while (done < wanted) {
      int n = in.read(position + done, buffer, offset + done, wanted - done);
      if (n < 0) {
        break;
      }
      done += n;
    }
    return done;
  }

  @Override
  public UfsOutputStream create(String uri, boolean overwrite, int mode) throws IOException {
    Path target = toPath(uri);
    if (target.isRoot()) {
      throw new IllegalArgumentException("Cannot write the root of " + prefix + " as a file");
    }
    // Built from the parent's path string: a child name given to Path on its own would be
    // parsed, and a ':' in it read as a URI scheme.
    String parent = target.getParent().toUri().getPath();
    Path temp =
        new Path(
            SCHEME,
            namenode,
            (parent.endsWith("/") ? parent : parent + "/")
                + "."
                + namePrefix(target.getName())
                + TEMP_MARKER
                + UUID.randomUUID());
    FsPermission wanted =
        mode == 0 ? FsPermission.getFileDefault() : new FsPermission((short) (mode & 07777));
    FsPermission masked = wanted.applyUMask(FsPermission.getUMask(conf));
    try {
      FileStatus existing = statusOrNull(target);
      if (existing != null && (!overwrite || existing.isDirectory())) {
        throw new FileAlreadyExistsException(
            uri, null, existing.isDirectory() ? "a directory is there" : null);
      }
      FSDataOutputStream out =
          fs.createNonRecursive(
              temp,
              wanted,
              EnumSet.of(CreateFlag.CREATE),
              conf.getInt("io.file.buffer.size", 4096),
              fs.getDefaultReplication(temp),
              fs.getDefaultBlockSize(temp),
              null);
      return new HdfsOutputStream(
          fs,
          errors,
          out,
          temp,
          target,
          uri,
          overwrite,
          mode != 0 && !masked.equals(wanted) ? wanted : null);
    } catch (FileNotFoundException e) {
      throw new NoSuchFileException(
          parentUri(uri), null, "the parent directory of " + uri + " does not exist");
    } catch (IOException e) {
      throw errors.translate(e, uri, "create");
    }
  }

  private FileStatus statusOrNull(Path path) throws IOException {
    try {
      return fs.getFileStatus(path);
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  /** The URI of the directory holding {@code uri}. */
  String parentUri(String uri) {
    String path = uri.substring(prefix.length());
    int slash = path.lastIndexOf('/', path.length() - 2);
    return prefix + (slash <= 0 ? "/" : path.substring(0, slash));
  }

  /**
   * Joins the files in the namenode with HDFS concat, which moves their blocks: the sources are
   * consumed. Copies them through this process when the namenode refuses (see {@link HdfsConcat}).
   */
  @Override
  public UfsStatus concat(List<String> sources, String target, boolean overwrite, int mode)
      throws IOException {
    return new HdfsConcat(this, fs, errors, conf).concat(sources, target, overwrite, mode);
  }

  @Override
  public void mkdirs(String uri, boolean recursive) throws IOException {
    Path dir = toPath(uri);
    try {
      if (recursive) {
        fs.mkdirs(dir, FsPermission.getDirDefault());
        return;
      }
      if (statusOrNull(dir) != null) {
        throw new FileAlreadyExistsException(uri);
      }
      // mkdir (not mkdirs) refuses to create missing parents.
      fs.mkdir(dir, FsPermission.getDirDefault());
    } catch (FileNotFoundException e) {
      throw new NoSuchFileException(
          parentUri(uri), null, "the parent directory of " + uri + " does not exist");
    } catch (IOException e) {
      throw errors.translate(e, uri, "create the directory");
    }
  }

  @Override
  public void delete(String uri, boolean recursive) throws IOException {
    Path path = toPath(uri);
    boolean deleted;
    try {
      deleted = fs.delete(path, recursive);
    } catch (IOException e) {
      throw errors.translate(e, uri, "delete");
    }
    if (!deleted) {
      throw new NoSuchFileException(uri);
    }
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    Path from = toPath(src);
    Path to = toPath(dst);
    try {
      // Options.Rename.NONE fails on an existing destination instead of moving into it.
      fs.rename(from, to, Options.Rename.NONE);
    } catch (FileNotFoundException e) {
      throw exists(src)
          ? new NoSuchFileException(
              parentUri(dst), null, "the parent directory of " + dst + " does not exist")
          : new NoSuchFileException(src);
    } catch (org.apache.hadoop.fs.FileAlreadyExistsException e) {
      throw new FileAlreadyExistsException(dst);
    } catch (IOException e) {
      IOException translated = errors.translate(e, src + " to " + dst, "rename");
      // HDFS reports a file renamed onto a directory (or the reverse) as a type mismatch
      // before it checks existence; either way the destination exists.
      if (!(translated instanceof StrataException) && exists(dst)) {
        FileAlreadyExistsException exists = new FileAlreadyExistsException(dst);
        exists.initCause(e);
        throw exists;
      }
      throw translated;
    }
  }

  /**
   * With {@code replace}, one namenode rename with {@link Options.Rename#OVERWRITE}, which replaces
   * a file or an empty directory in one step.
   */
  @Override
  public void rename(String src, String dst, boolean replace) throws IOException {
    if (!replace) {
      rename(src, dst);
      return;
    }
    Path from = toPath(src);
    Path to = toPath(dst);
    try {
      fs.rename(from, to, Options.Rename.OVERWRITE);
    } catch (FileNotFoundException e) {
      throw exists(src)
          ? new NoSuchFileException(
              parentUri(dst), null, "the parent directory of " + dst + " does not exist")
          : new NoSuchFileException(src);
    } catch (IOException e) {
      IOException translated = errors.translate(e, src + " to " + dst, "rename");
      if (translated instanceof StrataException) {
        throw translated;
      }
      throw replaceFailure(src, dst, from, to, translated);
    }
  }

  /**
   * The failure of a rename that replaces, in the contract's terms: the namenode reports a
   * directory that is not empty and kinds that do not match as bare IOExceptions.
   */
  private IOException replaceFailure(String src, String dst, Path from, Path to, IOException e)
      throws IOException {
    FileStatus source = linkStatusOrNull(from);
    FileStatus target = linkStatusOrNull(to);
    if (source == null || target == null) {
      return e;
    }
    IOException translated;
    if (source.isDirectory() && target.isDirectory()) {
      if (fs.listStatusIterator(to).hasNext()) {
        translated = new DirectoryNotEmptyException(dst);
      } else {
        return e;
      }
    } else if (target.isDirectory()) {
      translated = new FileSystemException(src, dst, "only a directory can replace a directory");
    } else if (source.isDirectory()) {
      translated =
          new FileSystemException(
              src, dst, "a directory cannot replace something that is not a directory");
    } else {
      return e;
    }
    translated.initCause(e);
    return translated;
  }

  /** The status of the entry itself, or null when there is none. */
  FileStatus linkStatusOrNull(Path path) throws IOException {
    try {
      return fs.getFileLinkStatus(path);
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  /**
   * A symbolic link made by the namenode, where the cluster allows them (see {@link HdfsSymlinks}).
   * The target is stored as a Hadoop path's text, which drops repeated and trailing '/'.
   */
  @Override
  public void createSymlink(String uri, String target) throws IOException {
    new HdfsSymlinks(this, fs, errors, namenode).create(uri, target);
  }

  @Override
  public void close() throws IOException {
    streams.close();
    fs.close();
    LOG.info("Closed HDFS under store {}", prefix);
  }

  @Override
  public String toString() {
    return "HdfsUnderFileSystem{" + prefix + ", user=" + user + "}";
  }
}
