package io.strata.client;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.strata.common.WorkerHashing;
import io.strata.common.conf.ClientKeys;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.ConcatFilesRequest;
import io.strata.proto.ConcatFilesResponse;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.MountInfo;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerServiceGrpc;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates a file as the concatenation of complete files of its mount, joined by a worker in their
 * under store, so that no byte passes through this client: the master creates the file (incomplete,
 * so unreadable), the worker a write of it would go to runs ConcatFiles onto its under-store path,
 * and the master completes it with the length, the fingerprint and the extended attributes in one
 * call. A failure deletes the incomplete file, as a failed write does; the under store's own
 * concatenation leaves nothing behind when it fails.
 */
final class FileConcat {
  private static final Logger LOG = LoggerFactory.getLogger(FileConcat.class);

  private FileConcat() {}

  static FileInfo concat(
      FileSystem fs,
      ClientContext ctx,
      String path,
      List<FileInfo> sources,
      CreateOptions options,
      Map<String, ByteString> xattrs)
      throws StrataException {
    if (sources.isEmpty()) {
      throw StrataException.invalidArgument(
          "Nothing to concatenate into " + path + ": give at least one source file");
    }
    long length = 0;
    for (FileInfo s : sources) {
      if (s.getDirectory() || !s.getComplete()) {
        throw StrataException.invalidArgument(
            "Cannot concatenate "
                + s.getPath()
                + " into "
                + path
                + ": "
                + (s.getDirectory() ? "it is a directory" : "it is still being" + " written"));
      }
      if (s.getPath().equals(path)) {
        throw StrataException.invalidArgument("Cannot concatenate " + path + " into itself");
      }
      length += s.getLength();
    }
    MountInfo mount = fs.mountOf(path);
    for (FileInfo s : sources) {
      if (s.getMountId() != mount.getMountId()) {
        throw otherMount(s, path, mount);
      }
    }
    List<WorkerInfo> live = FileSystem.liveWorkersForWrite(ctx);
    FileInfo file = ctx.master.call(s -> s.createFile(options.request(path).build())).getFile();
    if (file.getMountId() != mount.getMountId()) {
      // A mount was added or removed meanwhile.
      deleteIncomplete(ctx, file);
      throw otherMount(sources.get(0), path, mount);
    }
    WorkerInfo worker = WorkerHashing.pick(file.getFileId(), live, WorkerInfo::getWorkerId);
    ConcatFilesRequest.Builder request =
        ConcatFilesRequest.newBuilder()
            .setUfsPath(file.getUfsPath())
            .setMountId(file.getMountId())
            .setMode(file.getMode())
            .setOverwrite(options.overwrite());
    sources.forEach(s -> request.addSourceUfsPaths(s.getUfsPath()));
    long timeoutMs = ctx.conf.getDuration(ClientKeys.CONCAT_TIMEOUT).toMillis();
    ConcatFilesResponse joined;
    try {
      joined =
          WorkerServiceGrpc.newBlockingStub(ctx.workerChannel(worker.getAddress()))
              .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
              .concatFiles(request.build());
    } catch (StatusRuntimeException e) {
      deleteIncomplete(ctx, file);
      StrataException cause = GrpcErrors.fromStatus(e);
      throw new StrataException(
          cause.code(),
          "Cannot concatenate "
              + sources.size()
              + " files into "
              + path
              + " on worker "
              + worker.getAddress().getHost()
              + ":"
              + worker.getAddress().getRpcPort()
              + ": "
              + cause.getMessage(),
          cause);
    }
    if (joined.getLength() != length) {
      deleteIncomplete(ctx, file);
      throw new StrataException(
          ErrorCode.STALE,
          "Concatenation into "
              + path
              + " wrote "
              + joined.getLength()
              + " bytes where the sources' statuses add up to "
              + length
              + ": a source changed in the under store; get their statuses again and retry");
    }
    try {
      long written = length;
      return ctx.master
          .call(
              s ->
                  s.completeFile(
                      CompleteFileRequest.newBuilder()
                          .setPath(path)
                          .setFileId(file.getFileId())
                          .setLength(written)
                          .setUfsFingerprint(joined.getUfsFingerprint())
                          .putAllXattrs(xattrs)
                          .build()))
          .getFile();
    } catch (StrataException e) {
      // STALE: the path is another writer's file now, which the delete would refuse anyway.
      if (e.code() != ErrorCode.STALE) {
        deleteIncomplete(ctx, file);
      }
      throw new StrataException(e.code(), "Cannot complete " + path + ": " + e.getMessage(), e);
    }
  }

  private static StrataException otherMount(FileInfo source, String path, MountInfo mount) {
    return StrataException.invalidArgument(
        "Cannot concatenate "
            + source.getPath()
            + " into "
            + path
            + ": "
            + path
            + " is in the mount at "
            + mount.getPath()
            + " ("
            + mount.getUfsUri()
            + ") and the source in another; files are joined only within one under store, so"
            + " copy the bytes instead");
  }

  /** Deletes the new file, never another writer's file now at the same path. */
  private static void deleteIncomplete(ClientContext ctx, FileInfo file) {
    try {
      ctx.master.call(
          s ->
              s.delete(
                  DeleteRequest.newBuilder()
                      .setPath(file.getPath())
                      .setFileId(file.getFileId())
                      .build()));
    } catch (StrataException e) {
      if (e.code() == ErrorCode.STALE) {
        LOG.info("Not deleting {}: {}", file.getPath(), e.getMessage());
      } else {
        LOG.warn("Cannot delete the incomplete file {}: {}", file.getPath(), e.getMessage());
      }
    }
  }
}
