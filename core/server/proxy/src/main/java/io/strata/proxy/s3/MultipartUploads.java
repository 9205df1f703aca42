package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.client.CloseableIterator;
import io.strata.client.CreateOptions;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.SetAttributeOptions;
import io.strata.common.NameOrder;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.access.Principal;
import io.strata.proxy.checksum.BodyDigests;
import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumType;
import io.strata.proxy.checksum.ChecksumValue;
import io.strata.proxy.checksum.MultipartChecksums;
import io.strata.proxy.xml.CompleteMultipartUpload;
import io.strata.proxy.xml.CompletedUpload;
import io.strata.proxy.xml.CopyResult;
import io.strata.proxy.xml.InitiatedUpload;
import io.strata.proxy.xml.KeyEncoding;
import io.strata.proxy.xml.Owner;
import io.strata.proxy.xml.PartListing;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import io.strata.proxy.xml.UploadListing;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * S3 multipart uploads. An upload is a folder in the bucket's hidden uploads folder ({@code
 * <bucket>/.strata-uploads/<upload id>}), so its parts land in the under store the object will, and
 * no listing, mount or load job shows them; the folder's extended attributes hold the key,
 * initiator, start time, checksum settings and the metadata the object will get. Each part is a
 * file of that folder with its MD5 and checksum, written aside and renamed onto its number when
 * complete, so that a part uploaded again replaces the earlier one whole. Completion checks the
 * parts as S3 does (order, ETags, 5 MiB minimum but for the last), writes the object as the parts'
 * concatenation -- a new file that appears whole, with the multipart ETag and checksum, in one
 * master call; joined by the under store when the parts are in the object's mount, else copied
 * through the proxy -- and removes the upload. Uploads older than {@code
 * strata.proxy.multipart.max.age} are removed by {@link #removeExpired}.
 */
public final class MultipartUploads {
  private static final Logger LOG = LoggerFactory.getLogger(MultipartUploads.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Pattern UPLOAD_ID = Pattern.compile("[0-9a-f]{32}");

  /** S3's smallest part but the last. */
  static final long MIN_PART_SIZE = 5L << 20;

  static final int MAX_LISTED = 1000;

  /** Uploads of one bucket that ListMultipartUploads sorts in memory, at most. */
  static final int MAX_UPLOADS_SORTED = 100_000;

  static final String KEY = "strata.s3.upload.key";
  static final String INITIATED = "strata.s3.upload.initiated";
  static final String INITIATOR = "strata.s3.upload.initiator";
  static final String CHECKSUM_SETTING = "strata.s3.upload.checksum";

  /** The mode (octal) the completed object gets, from the ACL the upload was started with. */
  static final String MODE = "strata.s3.upload.mode";

  private final ProxyContext ctx;
  private final LifecycleExpiry lifecycle;

  public MultipartUploads(ProxyContext ctx) {
    this.ctx = ctx;
    this.lifecycle = new LifecycleExpiry(ctx);
  }

  private String uploadsFolder(String bucket) {
    return ctx.buckets().path(bucket) + "/" + PathNames.UPLOADS_FOLDER;
  }

  private static String partName(int number) {
    return String.format("%05d", number);
  }

  /** The upload's folder status, checked to be this key's and the caller's. */
  private FileInfo upload(S3Request r) throws StrataException {
    BucketOperations.bucketFolder(ctx, r);
    String id = r.query().get("uploadId");
    if (id == null || !UPLOAD_ID.matcher(id).matches()) {
      throw noSuchUpload(id);
    }
    FileInfo dir = BucketOperations.status(ctx, uploadsFolder(r.bucket()) + "/" + id);
    if (dir == null || !dir.getDirectory()) {
      throw noSuchUpload(id);
    }
    ByteString key = dir.getXattrsMap().get(KEY);
    if (key == null || !key.toStringUtf8().equals(r.key())) {
      throw noSuchUpload(id);
    }
    Principal p = r.principal();
    ByteString initiator = dir.getXattrsMap().get(INITIATOR);
    if (!p.superuser() && initiator != null && !initiator.toStringUtf8().equals(p.user())) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: the upload " + id + " was started by another user");
    }
    return dir;
  }

  private static S3Exception noSuchUpload(String id) {
    return new S3Exception(
        S3ErrorCode.NO_SUCH_UPLOAD,
        "The specified multipart upload does"
            + " not exist: "
            + id
            + ". It may have been aborted or completed.");
  }

  void create(S3Request r) throws IOException {
    FileInfo bucketFolder = BucketOperations.bucketFolder(ctx, r);
    RequestedAcl.NewObjectAcl acl = RequestedAcl.forNewObject(r, bucketFolder);
    if (r.key().endsWith("/")) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "A folder key (ending in '/') holds" + " no bytes and cannot be uploaded in parts");
    }
    String path = ctx.buckets().objectPath(r.bucket(), r.key());
    ctx.access().checkWriteIn(r.principal(), PathNames.parent(path));
    Map<String, ByteString> xattrs = new LinkedHashMap<>(ObjectMetadata.fromRequest(r.headers()));
    String tagging = r.header("x-amz-tagging");
    if (tagging != null) {
      xattrs.put(
          ObjectMetadata.TAGGING,
          ByteString.copyFromUtf8(io.strata.proxy.xml.TagSet.fromHeader(tagging).toHeader()));
    }
    String algorithmName = r.header(ChecksumAlgorithm.ALGORITHM_HEADER);
    if (algorithmName == null) {
      algorithmName = r.header(ChecksumAlgorithm.SDK_ALGORITHM_HEADER);
    }
    ChecksumAlgorithm algorithm = null;
    ChecksumType type = null;
    if (algorithmName != null) {
      algorithm = ChecksumAlgorithm.fromValue(algorithmName);
      String t = r.header(ChecksumType.HEADER);
      type =
          ChecksumType.forMultipartUpload(algorithm, t == null ? null : ChecksumType.fromValue(t));
      xattrs.put(CHECKSUM_SETTING, ByteString.copyFromUtf8(algorithm.name() + ":" + type.name()));
    }
    byte[] idBytes = new byte[16];
    RANDOM.nextBytes(idBytes);
    String id = HexFormat.of().formatHex(idBytes);
    xattrs.put(KEY, ByteString.copyFromUtf8(r.key()));
    long initiated = System.currentTimeMillis();
    xattrs.put(INITIATED, ByteString.copyFromUtf8(Long.toString(initiated)));
    xattrs.put(INITIATOR, ByteString.copyFromUtf8(r.principal().user()));
    xattrs.put(MODE, ByteString.copyFromUtf8(Integer.toOctalString(acl.mode())));
    acl.addTo(xattrs);
    String dir = uploadsFolder(r.bucket()) + "/" + id;
    Principal p = r.principal();
    ctx.fs().createDirectory(dir, true, false, 0700, p.user(), p.primaryGroup());
    SetAttributeOptions set = SetAttributeOptions.defaults();
    for (Map.Entry<String, ByteString> e : xattrs.entrySet()) {
      set = set.xattr(e.getKey(), e.getValue());
    }
    // A rule that aborts incomplete uploads gives the upload's folder its time to live now.
    set = lifecycle.uploadExpiry(bucketFolder, r.key(), initiated, set);
    ctx.fs().setAttribute(dir, set);
    HttpHeaders h = r.baseHeaders();
    h.set("Content-Type", "application/xml");
    if (algorithm != null) {
      h.set(ChecksumAlgorithm.ALGORITHM_HEADER, algorithm.name());
      h.set(ChecksumType.HEADER, type.name());
    }
    r.exchange()
        .respond(
            HttpResponseStatus.OK,
            h,
            S3XmlWriter.initiateMultipartUploadResult(
                new InitiatedUpload(r.bucket(), r.key(), id)));
  }

  private static int partNumber(S3Request r) {
    return r.query().getInt("partNumber", 0, 1, CompleteMultipartUpload.MAX_PART_NUMBER);
  }

  void uploadPart(S3Request r) throws IOException {
    FileInfo dir = upload(r);
    int number = partNumber(r);
    UploadBody body = UploadBody.open(r, UploadBody.MAX_PUT_BYTES);
    ChecksumSetting setting = ChecksumSetting.of(dir);
    if (setting != null && body.algorithm() != null && body.algorithm() != setting.algorithm()) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "The upload was created with the "
              + setting.algorithm()
              + " checksum; this part carries "
              + body.algorithm());
    }
    FileOutStream out = newPartFile(dir, number, r.principal());
    ChecksumValue c;
    try {
      body.copyTo(out, new byte[64 << 10]);
      body.verify();
      Map<String, ByteString> xattrs = new LinkedHashMap<>();
      xattrs.put(ObjectMetadata.ETAG, ByteString.copyFromUtf8(body.md5Hex()));
      c = body.checksum();
      if (c != null) {
        xattrs.put(ObjectMetadata.CHECKSUM, ObjectMetadata.encodeChecksum(c));
      }
      out.setXattrsOnComplete(xattrs);
      out.close();
    } catch (IOException | RuntimeException e) {
      out.cancel();
      throw e;
    }
    keepPart(out, dir, number);
    HttpHeaders h = r.baseHeaders();
    h.set("ETag", "\"" + body.md5Hex() + "\"");
    if (c != null) {
      h.set(c.algorithm().headerName(), c.value());
    }
    r.exchange().respond(HttpResponseStatus.OK, h, null);
  }

  void uploadPartCopy(S3Request r) throws IOException {
    FileInfo dir = upload(r);
    int number = partNumber(r);
    String[] source = ObjectWrites.copySource(r);
    FileInfo src = ObjectWrites.copySourceObject(ctx, source);
    ctx.access().checkRead(r.principal(), src);
    Conditions.checkCopySource(r, ObjectMetadata.etag(src), src.getModificationTimeMs());
    long start = 0;
    long length = src.getLength();
    String range = r.header("x-amz-copy-source-range");
    if (range != null) {
      ByteRange br = ByteRange.parse(range, src.getLength());
      if (br == null || !range.trim().matches("bytes=\\d+-\\d+")) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "The x-amz-copy-source-range value"
                + " must be of the form bytes=first-last where first and last are the zero-based"
                + " offsets of the first and last bytes to copy");
      }
      long last = Long.parseLong(range.trim().substring(range.trim().indexOf('-') + 1));
      if (last >= src.getLength()) {
        throw new S3Exception(
            S3ErrorCode.INVALID_RANGE,
            "Range specified is not valid for" + " source object of size: " + src.getLength());
      }
      start = br.start();
      length = br.length();
    }
    ChecksumSetting setting = ChecksumSetting.of(dir);
    BodyDigests digests = BodyDigests.of(false, setting == null ? null : setting.algorithm());
    try (FileInStream in = ctx.fs().openFile(src)) {
      FileOutStream out = newPartFile(dir, number, r.principal());
      try {
        copy(in, start, length, out, digests);
        Map<String, ByteString> xattrs = new LinkedHashMap<>();
        xattrs.put(ObjectMetadata.ETAG, ByteString.copyFromUtf8(digests.md5Hex()));
        // Parts get the upload's checksum; an upload without one has parts without one.
        if (setting != null) {
          xattrs.put(ObjectMetadata.CHECKSUM, ObjectMetadata.encodeChecksum(digests.checksum()));
        }
        out.setXattrsOnComplete(xattrs);
        out.close();
      } catch (IOException | RuntimeException e) {
        out.cancel();
        throw e;
      }
      keepPart(out, dir, number);
      r.xml(
          S3XmlWriter.copyPartResult(
              new CopyResult(
                  digests.md5Hex(),
                  Instant.ofEpochMilli(out.completedStatus().getModificationTimeMs()),
                  setting == null ? null : digests.checksum())));
    }
  }

  /**
   * A new file for one upload of part {@code number}, named aside from the part (its number and a
   * random suffix, which part listings skip) so that uploads of one part number never cut each
   * other off; {@link #keepPart} makes it the part.
   */
  private FileOutStream newPartFile(FileInfo dir, int number, Principal p) throws StrataException {
    byte[] suffix = new byte[8];
    RANDOM.nextBytes(suffix);
    String aside = dir.getPath() + "/" + partName(number) + "." + HexFormat.of().formatHex(suffix);
    return ctx.fs()
        .createFile(aside, CreateOptions.defaults().owner(p.user()).group(p.primaryGroup()));
  }

  /**
   * Makes the complete file {@code out} wrote part {@code number}, replacing an earlier upload of
   * that number in one step: as in S3, the last upload of a part number to finish is the part.
   */
  private void keepPart(FileOutStream out, FileInfo dir, int number) throws StrataException {
    String aside = out.completedStatus().getPath();
    try {
      ctx.fs().rename(aside, dir.getPath() + "/" + partName(number), true);
    } catch (StrataException | RuntimeException e) {
      try {
        ctx.fs().delete(aside, false);
      } catch (StrataException ignored) {
        // Removed with the upload.
      }
      throw e;
    }
  }

  private static void copy(
      FileInStream in, long start, long length, FileOutStream out, BodyDigests digests)
      throws IOException {
    byte[] buf = new byte[256 << 10];
    long pos = start;
    long end = start + length;
    while (pos < end) {
      int n = (int) Math.min(buf.length, end - pos);
      in.readFully(pos, buf, 0, n);
      if (digests != null) {
        digests.update(buf, 0, n);
      }
      out.write(buf, 0, n);
      pos += n;
    }
  }

  /** The checksum an upload was created with. */
  private record ChecksumSetting(ChecksumAlgorithm algorithm, ChecksumType type) {
    static ChecksumSetting of(FileInfo dir) {
      ByteString v = dir.getXattrsMap().get(CHECKSUM_SETTING);
      if (v == null) {
        return null;
      }
      String[] f = v.toStringUtf8().split(":");
      return new ChecksumSetting(ChecksumAlgorithm.valueOf(f[0]), ChecksumType.valueOf(f[1]));
    }
  }

  /**
   * CompleteMultipartUpload: checks the parts the request lists against the stored ones, writes the
   * object as their concatenation with the multipart ETag and checksum, removes the upload and
   * answers with the object's ETag.
   */
  void complete(S3Request r) throws IOException {
    FileInfo dir;
    try {
      dir = upload(r);
    } catch (S3Exception e) {
      if (e.code() != S3ErrorCode.NO_SUCH_UPLOAD || !answerCompletedAgain(r)) {
        throw e;
      }
      return;
    }
    // A checksum header here is the object's, not the document's.
    byte[] document =
        UploadBody.document(r, S3XmlParser.MAX_COMPLETE_MULTIPART_UPLOAD_BYTES, false);
    CompleteMultipartUpload request = S3XmlParser.completeMultipartUpload(document);
    Map<Integer, FileInfo> stored = parts(dir.getPath());
    ChecksumSetting setting = ChecksumSetting.of(dir);
    ChosenParts chosen = chooseParts(request, stored, setting);
    String etag = MultipartChecksums.etag(chosen.etags());
    ChecksumValue objectChecksum = objectChecksum(r, setting, chosen.checksums());
    Map<String, ByteString> xattrs = objectXattrs(dir, etag, chosen.files(), objectChecksum);
    // Versioning hook: the object's version id, kept with it.
    ObjectVersions versions = new ObjectVersions(ctx);
    String versionId = versions.stamp(r.bucket(), r.key(), xattrs);
    writeObject(r, chosen.files(), objectMode(dir), xattrs);
    versions.written(r.bucket(), r.key(), versionId);
    removeUpload(dir.getPath());
    answerCompleted(r, etag, objectChecksum, versionId);
  }

  private static void answerCompleted(
      S3Request r, String etag, ChecksumValue checksum, String versionId) {
    HttpHeaders h = r.baseHeaders();
    h.set("Content-Type", "application/xml");
    if (versionId != null) {
      h.set("x-amz-version-id", versionId);
    }
    r.exchange()
        .respond(
            HttpResponseStatus.OK,
            h,
            S3XmlWriter.completeMultipartUploadResult(
                new CompletedUpload(
                    "/" + r.bucket() + "/" + r.key(), r.bucket(), r.key(), etag, checksum)));
  }

  /**
   * Answers a completion of an upload that is gone because it was completed into the object now at
   * the key (a retry whose first answer was lost) with that object, as S3 does; false when the
   * object there came from elsewhere.
   */
  private boolean answerCompletedAgain(S3Request r) throws StrataException {
    String id = r.query().get("uploadId");
    String path = ctx.buckets().objectPath(r.bucket(), r.key());
    FileInfo f = BucketOperations.status(ctx, path);
    if (id == null || f == null || f.getDirectory() || !f.getComplete()) {
      return false;
    }
    ByteString completed = f.getXattrsMap().get(ObjectMetadata.COMPLETED_UPLOAD);
    if (completed == null || !completed.toStringUtf8().equals(id)) {
      return false;
    }
    ctx.access().checkWriteIn(r.principal(), PathNames.parent(path));
    answerCompleted(
        r,
        ObjectMetadata.etag(f),
        ObjectMetadata.checksum(f),
        f.getXattrsMap().containsKey(ObjectVersions.VERSION_ID) ? ObjectVersions.idOf(f) : null);
    return true;
  }

  /**
   * The stored parts a completion names, in its order, with their ETags and (when the upload has a
   * checksum setting) checksums.
   */
  private record ChosenParts(
      List<FileInfo> files, List<String> etags, List<MultipartChecksums.PartChecksum> checksums) {}

  /**
   * Picks the stored parts {@code request} lists, checked as S3 checks them: in ascending order,
   * each stored with the ETag given, every one but the last at least {@link #MIN_PART_SIZE}, and
   * each with the upload's checksum (matching the one given, if any).
   */
  private static ChosenParts chooseParts(
      CompleteMultipartUpload request, Map<Integer, FileInfo> stored, ChecksumSetting setting) {
    ChosenParts chosen = new ChosenParts(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
    int previous = 0;
    for (int i = 0; i < request.parts().size(); i++) {
      CompleteMultipartUpload.Part p = request.parts().get(i);
      if (p.partNumber() <= previous) {
        throw new S3Exception(
            S3ErrorCode.INVALID_PART_ORDER,
            "The list of parts was not in"
                + " ascending order: part "
                + p.partNumber()
                + " follows part "
                + previous);
      }
      previous = p.partNumber();
      FileInfo part = stored.get(p.partNumber());
      String etag = part == null ? null : ObjectMetadata.etag(part);
      if (part == null || !etag.equals(p.etag())) {
        throw new S3Exception(
                S3ErrorCode.INVALID_PART,
                "One or more of the specified parts"
                    + " could not be found, or its ETag did not match: part "
                    + p.partNumber())
            .withHeader("x-amz-part", Integer.toString(p.partNumber()));
      }
      if (i < request.parts().size() - 1 && part.getLength() < MIN_PART_SIZE) {
        throw new S3Exception(
            S3ErrorCode.ENTITY_TOO_SMALL,
            "Your proposed upload is smaller"
                + " than the minimum allowed object size: part "
                + p.partNumber()
                + " has "
                + part.getLength()
                + " bytes, and every part but the last needs at least "
                + MIN_PART_SIZE);
      }
      if (setting != null) {
        chosen.checksums().add(partChecksum(p, part, setting));
      }
      chosen.files().add(part);
      chosen.etags().add(etag);
    }
    return chosen;
  }

  /**
   * A chosen part's checksum of the upload's algorithm, which it must have been uploaded with and
   * which must match the one the completion gives for it, if any.
   */
  private static MultipartChecksums.PartChecksum partChecksum(
      CompleteMultipartUpload.Part p, FileInfo part, ChecksumSetting setting) {
    ChecksumValue c = ObjectMetadata.checksum(part);
    String given = p.checksums().get(setting.algorithm());
    if (c == null) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "Part "
              + p.partNumber()
              + " was uploaded without the upload's "
              + setting.algorithm()
              + " checksum");
    }
    if (given != null && !given.equals(c.value())) {
      throw new S3Exception(
          S3ErrorCode.INVALID_PART,
          "The "
              + setting.algorithm()
              + " checksum given for part "
              + p.partNumber()
              + " does not match the part's");
    }
    return new MultipartChecksums.PartChecksum(c.value(), part.getLength());
  }

  /**
   * The object's checksum from its parts' (null when the upload has no checksum setting), checked
   * against a full-object checksum the request's header gives.
   */
  private static ChecksumValue objectChecksum(
      S3Request r, ChecksumSetting setting, List<MultipartChecksums.PartChecksum> checksums) {
    ChecksumValue objectChecksum =
        setting == null
            ? null
            : MultipartChecksums.objectChecksum(setting.algorithm(), setting.type(), checksums);
    if (objectChecksum != null) {
      String expected = r.header(setting.algorithm().headerName());
      if (expected != null
          && setting.type() == ChecksumType.FULL_OBJECT
          && !expected.equals(objectChecksum.value())) {
        throw new S3Exception(
            S3ErrorCode.BAD_DIGEST,
            "The full-object " + setting.algorithm() + " checksum given does not match the parts'");
      }
    }
    return objectChecksum;
  }

  /**
   * The mode of the object an upload completes: the one its ACL gave at its start; an upload
   * started before modes were kept gets the owner's read and write only.
   */
  private static int objectMode(FileInfo dir) {
    ByteString v = dir.getXattrsMap().get(MODE);
    try {
      return v == null ? 0600 : Integer.parseInt(v.toStringUtf8(), 8);
    } catch (NumberFormatException e) {
      return 0600;
    }
  }

  /**
   * The completed object's extended attributes: the metadata the upload was started with (not its
   * own bookkeeping), the multipart ETag, the part lengths and the checksum, if any.
   */
  private static Map<String, ByteString> objectXattrs(
      FileInfo dir, String etag, List<FileInfo> chosen, ChecksumValue objectChecksum) {
    Map<String, ByteString> xattrs = new LinkedHashMap<>();
    for (Map.Entry<String, ByteString> e : dir.getXattrsMap().entrySet()) {
      // The upload's lifecycle rule (abort) is its own; the object gets its rules when written.
      if (!e.getKey().startsWith("strata.s3.upload.") && !e.getKey().equals(LifecycleExpiry.RULE)) {
        xattrs.put(e.getKey(), e.getValue());
      }
    }
    xattrs.put(ObjectMetadata.ETAG, ByteString.copyFromUtf8(etag));
    xattrs.put(
        ObjectMetadata.COMPLETED_UPLOAD, ByteString.copyFromUtf8(PathNames.name(dir.getPath())));
    StringJoiner partLengths = new StringJoiner(",");
    chosen.forEach(part -> partLengths.add(Long.toString(part.getLength())));
    xattrs.put(ObjectMetadata.PARTS, ByteString.copyFromUtf8(partLengths.toString()));
    if (objectChecksum != null) {
      xattrs.put(ObjectMetadata.CHECKSUM, ObjectMetadata.encodeChecksum(objectChecksum));
    }
    return xattrs;
  }

  /**
   * Writes the object as the concatenation of {@code chosen}: joined by the under store when every
   * part is in the object's mount, else copied through the proxy. Other writers of the key do not
   * wait for it, nor it for them: the later one to take the key wins ({@link PendingObject}).
   */
  private void writeObject(
      S3Request r, List<FileInfo> chosen, int mode, Map<String, ByteString> xattrs)
      throws IOException {
    String path = ctx.buckets().objectPath(r.bucket(), r.key());
    ctx.access().checkWriteIn(r.principal(), PathNames.parent(path));
    long mount = ctx.fs().mountOf(path).getMountId();
    if (chosen.stream().allMatch(part -> part.getMountId() == mount)) {
      // The object's under store joins the parts where they are: no byte through the proxy.
      PendingObject.concat(ctx, r.bucket(), path, r.key(), r.principal(), mode, chosen, xattrs);
    } else {
      copyParts(r, path, chosen, mode, xattrs);
    }
  }

  /**
   * Writes the object at {@code path} by copying the parts through the proxy, one after another.
   */
  private void copyParts(
      S3Request r, String path, List<FileInfo> chosen, int mode, Map<String, ByteString> xattrs)
      throws IOException {
    PendingObject pending =
        PendingObject.create(ctx, r.bucket(), path, r.key(), r.principal(), mode);
    try {
      for (FileInfo part : chosen) {
        try (FileInStream in = ctx.fs().openFile(part)) {
          copy(in, 0, part.getLength(), pending.out(), null);
        }
      }
    } catch (IOException | RuntimeException e) {
      pending.cancel();
      throw e;
    }
    pending.complete(xattrs, WriteConditions.NONE);
  }

  /**
   * Where a listing of {@code sorted} uploads resumes: after the upload the markers name, which is
   * where the previous page stopped (uploads of one key are in the order they were started, not of
   * their ids). When that upload is gone, after the key's uploads with an id up to the id marker,
   * as S3 documents it.
   */
  private static int afterMarkers(
      List<UploadListing.Upload> sorted, String keyMarker, String idMarker) {
    if (keyMarker.isEmpty()) {
      return 0;
    }
    if (!idMarker.isEmpty()) {
      for (int i = 0; i < sorted.size(); i++) {
        UploadListing.Upload u = sorted.get(i);
        if (u.key().equals(keyMarker) && u.uploadId().equals(idMarker)) {
          return i + 1;
        }
      }
    }
    for (int i = 0; i < sorted.size(); i++) {
      UploadListing.Upload u = sorted.get(i);
      int c = NameOrder.compare(u.key(), keyMarker);
      if (c > 0 || (c == 0 && !idMarker.isEmpty() && u.uploadId().compareTo(idMarker) > 0)) {
        return i;
      }
    }
    return sorted.size();
  }

  /** The upload's parts by number, with their blocks (ready to be read). */
  private Map<Integer, FileInfo> parts(String uploadDir) throws StrataException {
    Map<Integer, FileInfo> parts = new LinkedHashMap<>();
    try (CloseableIterator<FileInfo> it =
        ctx.fs().listStatus(uploadDir, io.strata.client.SyncOption.DEFAULT, true)) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (!f.getDirectory() && f.getComplete()) {
          try {
            parts.put(Integer.parseInt(f.getName()), f);
          } catch (NumberFormatException e) {
            // not a part
          }
        }
      }
    }
    return parts;
  }

  private void removeUpload(String uploadDir) {
    try {
      ctx.fs().delete(uploadDir, true);
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        LOG.warn(
            "Cannot remove the finished upload {}: {} (the cleaner will retry)",
            uploadDir,
            e.getMessage());
      }
    }
  }

  void abort(S3Request r) throws IOException {
    FileInfo dir = upload(r);
    try {
      ctx.fs().delete(dir.getPath(), true);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        throw noSuchUpload(r.query().get("uploadId"));
      }
      throw e;
    }
    r.empty(HttpResponseStatus.NO_CONTENT, null);
  }

  void listParts(S3Request r) throws IOException {
    FileInfo dir = upload(r);
    int marker = r.query().getInt("part-number-marker", 0, 0, Integer.MAX_VALUE);
    int maxParts =
        Math.min(MAX_LISTED, r.query().getInt("max-parts", MAX_LISTED, 0, Integer.MAX_VALUE));
    List<PartListing.Part> parts = new ArrayList<>();
    boolean truncated = false;
    Integer next = null;
    String after = marker > 0 ? partName(marker) : "";
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatusAfter(dir.getPath(), after, false)) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (f.getDirectory() || !f.getComplete()) {
          continue;
        }
        int number;
        try {
          number = Integer.parseInt(f.getName());
        } catch (NumberFormatException e) {
          continue;
        }
        if (parts.size() == maxParts) {
          truncated = true;
          break;
        }
        parts.add(
            new PartListing.Part(
                number,
                Instant.ofEpochMilli(f.getModificationTimeMs()),
                ObjectMetadata.etag(f),
                f.getLength(),
                ObjectMetadata.checksum(f)));
        next = number;
      }
    }
    ChecksumSetting setting = ChecksumSetting.of(dir);
    Owner initiator = owner(dir);
    r.xml(
        S3XmlWriter.listPartsResult(
            new PartListing(
                r.bucket(),
                r.key(),
                r.query().get("uploadId"),
                marker,
                truncated ? next : null,
                maxParts,
                truncated,
                initiator,
                initiator,
                "STANDARD",
                setting == null ? null : setting.algorithm(),
                setting == null ? null : setting.type(),
                parts)));
  }

  private static Owner owner(FileInfo dir) {
    ByteString who = dir.getXattrsMap().get(INITIATOR);
    String user = who == null ? dir.getOwner() : who.toStringUtf8();
    return new Owner(user, user);
  }

  void listUploads(S3Request r) throws IOException {
    FileInfo bucket = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkList(r.principal(), bucket);
    String prefix = r.query().get("prefix", "");
    String delimiter = r.query().get("delimiter", "");
    String keyMarker = r.query().get("key-marker", "");
    String idMarker = r.query().get("upload-id-marker", "");
    int maxUploads =
        Math.min(MAX_LISTED, r.query().getInt("max-uploads", MAX_LISTED, 0, Integer.MAX_VALUE));
    boolean url = KeyEncoding.isUrlEncoding(r.query().get("encoding-type"));
    List<UploadListing.Upload> all = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(uploadsFolder(r.bucket()))) {
      while (it.hasNext() && all.size() < MAX_UPLOADS_SORTED) {
        FileInfo d = it.next();
        ByteString key = d.getXattrsMap().get(KEY);
        if (!d.getDirectory() || key == null || !key.toStringUtf8().startsWith(prefix)) {
          continue;
        }
        ChecksumSetting setting = ChecksumSetting.of(d);
        Owner o = owner(d);
        all.add(
            new UploadListing.Upload(
                key.toStringUtf8(),
                d.getName(),
                o,
                o,
                "STANDARD",
                Instant.ofEpochMilli(initiated(d)),
                setting == null ? null : setting.algorithm(),
                setting == null ? null : setting.type()));
      }
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
    }
    all.sort(
        (a, b) -> {
          int c = NameOrder.compare(a.key(), b.key());
          c = c != 0 ? c : a.initiated().compareTo(b.initiated());
          return c != 0 ? c : a.uploadId().compareTo(b.uploadId());
        });
    List<UploadListing.Upload> page = new ArrayList<>();
    List<String> prefixes = new ArrayList<>();
    boolean truncated = false;
    String lastKey = null;
    String lastId = null;
    for (UploadListing.Upload u : all.subList(afterMarkers(all, keyMarker, idMarker), all.size())) {
      String cp = null;
      if (!delimiter.isEmpty()) {
        int at = u.key().indexOf(delimiter, prefix.length());
        if (at >= 0) {
          cp = u.key().substring(0, at + delimiter.length());
          // A key marker that is this prefix, or within it, comes from a page that gave it.
          if ((!prefixes.isEmpty() && prefixes.get(prefixes.size() - 1).equals(cp))
              || keyMarker.startsWith(cp)) {
            continue;
          }
        }
      }
      if (page.size() + prefixes.size() == maxUploads) {
        truncated = true;
        break;
      }
      if (cp != null) {
        prefixes.add(cp);
        lastKey = cp;
        lastId = null;
      } else {
        page.add(u);
        lastKey = u.key();
        lastId = u.uploadId();
      }
    }
    r.xml(
        S3XmlWriter.listMultipartUploadsResult(
            new UploadListing(
                r.bucket(),
                keyMarker,
                idMarker,
                truncated ? lastKey : null,
                truncated ? lastId : null,
                prefix,
                delimiter,
                maxUploads,
                truncated,
                url,
                page,
                prefixes)));
  }

  /** When the upload of the folder {@code dir} started, in ms since the epoch. */
  static long initiated(FileInfo dir) {
    ByteString v = dir.getXattrsMap().get(INITIATED);
    try {
      return v == null ? dir.getModificationTimeMs() : Long.parseLong(v.toStringUtf8());
    } catch (NumberFormatException e) {
      return dir.getModificationTimeMs();
    }
  }

  /**
   * Removes every upload of every bucket started more than {@code maxAge} ago, with its parts.
   *
   * @return uploads removed
   */
  public int removeExpired(Duration maxAge) {
    long cutoff = System.currentTimeMillis() - maxAge.toMillis();
    int removed = 0;
    List<String> folders = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(PathNames.ROOT)) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (f.getDirectory()) {
          folders.add(f.getPath());
        }
      }
    } catch (StrataException | RuntimeException e) {
      LOG.warn("Cannot list the buckets to clean abandoned uploads: {}", e.toString());
      return 0;
    }
    folders.addAll(ctx.buckets().mapped().values());
    for (String bucket : folders) {
      String uploads = bucket + "/" + PathNames.UPLOADS_FOLDER;
      List<String> expired = new ArrayList<>();
      try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(uploads)) {
        while (it.hasNext()) {
          FileInfo d = it.next();
          // Uploads are folders; a file is an object staged by a proxy that died before it
          // moved it onto its key (PendingObject).
          if (initiated(d) < cutoff) {
            expired.add(d.getPath());
          }
        }
      } catch (StrataException | RuntimeException e) {
        continue;
      }
      for (String d : expired) {
        try {
          ctx.fs().delete(d, true);
          removed++;
          LOG.info("Removed the multipart upload {}, abandoned for over {}", d, maxAge);
        } catch (StrataException e) {
          LOG.warn("Cannot remove the abandoned upload {}: {}", d, e.getMessage());
        }
      }
    }
    return removed;
  }
}
