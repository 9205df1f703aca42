package io.strata.master.file;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.strata.common.PathNames;
import io.strata.common.Version;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.journal.JournalSystem;
import io.strata.master.upgrade.ClientDirectory;
import io.strata.proto.CheckpointRequest;
import io.strata.proto.CheckpointResponse;
import io.strata.proto.CommitNewFileRequest;
import io.strata.proto.CommitNewFileResponse;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CompleteFileResponse;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateDirectoryResponse;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.CreateFileResponse;
import io.strata.proto.CreateHardLinkRequest;
import io.strata.proto.CreateHardLinkResponse;
import io.strata.proto.CreateSpecialFileRequest;
import io.strata.proto.CreateSpecialFileResponse;
import io.strata.proto.DeleteRequest;
import io.strata.proto.DeleteResponse;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.FreeRequest;
import io.strata.proto.FreeResponse;
import io.strata.proto.GetFileBlocksRequest;
import io.strata.proto.GetFileBlocksResponse;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetStatusResponse;
import io.strata.proto.GetWorkersRequest;
import io.strata.proto.GetWorkersResponse;
import io.strata.proto.ListMountsRequest;
import io.strata.proto.ListMountsResponse;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import io.strata.proto.LoadMetadataProgress;
import io.strata.proto.LoadMetadataRequest;
import io.strata.proto.MountRequest;
import io.strata.proto.MountResponse;
import io.strata.proto.PersistenceState;
import io.strata.proto.RenameRequest;
import io.strata.proto.RenameResponse;
import io.strata.proto.RenewLeasesRequest;
import io.strata.proto.RenewLeasesResponse;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.SetAttributeResponse;
import io.strata.proto.UnmountRequest;
import io.strata.proto.UnmountResponse;
import io.strata.proto.WatchChangesRequest;
import io.strata.proto.WatchChangesResponse;
import io.strata.server.common.RpcCalls;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC face of the master for clients: it normalizes paths, calls the {@link Namespace}, and
 * reports failures through {@link RpcCalls} so each becomes the status code its {@code
 * StrataException} names. ListStatus streams pages with flow control ({@link DirectoryListing});
 * LoadMetadata walks a tree on an executor of its own, so a long walk never holds an RPC thread,
 * and streams its progress.
 */
public final class FileSystemMasterService extends FileSystemMasterGrpc.FileSystemMasterImplBase {
  private static final Logger LOG = LoggerFactory.getLogger(FileSystemMasterService.class);

  private final Namespace namespace;
  private final WorkerRegistry workers;
  private final JournalSystem journal;
  private final ChangeFeed changes;
  private final RpcCalls calls;
  private final int defaultPageSize;
  private final long startTimeMs;
  private final Executor loadExecutor;

  /**
   * @param loadExecutor runs LoadMetadata walks
   */
  private final ClientDirectory clients;

  private final Supplier<WriterLeases> leases;

  public FileSystemMasterService(
      Namespace namespace,
      WorkerRegistry workers,
      JournalSystem journal,
      ChangeFeed changes,
      RpcCalls calls,
      int defaultPageSize,
      long startTimeMs,
      Executor loadExecutor,
      ClientDirectory clients,
      Supplier<WriterLeases> leases) {
    this.clients = clients;
    this.leases = leases;
    this.namespace = namespace;
    this.workers = workers;
    this.journal = journal;
    this.changes = changes;
    this.calls = calls;
    this.defaultPageSize = Math.max(1, defaultPageSize);
    this.startTimeMs = startTimeMs;
    this.loadExecutor = loadExecutor;
  }

  /** The sync interval a request gives, or null when it gives none. */
  private static SyncInterval interval(boolean given, long millis) throws StrataException {
    if (!given) {
      return null;
    }
    try {
      return SyncInterval.ofMillis(millis);
    } catch (IllegalArgumentException e) {
      throw StrataException.invalidArgument(e.getMessage());
    }
  }

  @Override
  public void getStatus(GetStatusRequest request, StreamObserver<GetStatusResponse> observer) {
    calls.unaryAsync(
        "GetStatus",
        observer,
        () ->
            namespace
                .getStatus(
                    PathNames.normalize(request.getPath()),
                    interval(request.hasSyncIntervalMs(), request.getSyncIntervalMs()),
                    request.getIncludeBlocks())
                .thenApply(f -> GetStatusResponse.newBuilder().setFile(f).build()));
  }

  @Override
  public void listStatus(ListStatusRequest request, StreamObserver<ListStatusResponse> observer) {
    long start = System.nanoTime();
    ServerCallStreamObserver<ListStatusResponse> call =
        (ServerCallStreamObserver<ListStatusResponse>) observer;
    // gRPC takes the stream's handlers only before this method returns; the pages start once
    // the directory is loaded (at once when it is).
    ListingStream stream = new ListingStream();
    call.setOnCancelHandler(stream::cancel);
    call.setOnReadyHandler(stream);
    CompletableFuture<Namespace.Listing> opened;
    try {
      opened =
          namespace.openListing(
              PathNames.normalize(request.getPath()),
              interval(request.hasSyncIntervalMs(), request.getSyncIntervalMs()),
              request.getIncludeBlocks(),
              request.getLoadedOnly());
    } catch (Exception e) {
      opened = CompletableFuture.failedFuture(e);
    }
    // The callback is the last stage: it answers the call, failure included.
    var unused =
        opened.whenComplete(
            (listing, error) -> {
              if (error != null) {
                calls.timer("ListStatus").record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                try {
                  observer.onError(GrpcErrors.toStatus(RpcCalls.unwrap(error)));
                } catch (RuntimeException e) {
                  LOG.debug("ListStatus could not be answered: {}", e.toString());
                }
                return;
              }
              if (listing.file() != null) {
                try {
                  observer.onNext(ListStatusResponse.newBuilder().addFiles(listing.file()).build());
                  observer.onCompleted();
                } catch (RuntimeException e) {
                  LOG.debug("ListStatus could not be answered: {}", e.toString());
                }
                calls.timer("ListStatus").record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                return;
              }
              int pageSize = request.getPageSize() > 0 ? request.getPageSize() : defaultPageSize;
              stream.start(
                  new DirectoryListing(
                      namespace,
                      listing.dirId(),
                      request.getStartAfter(),
                      pageSize,
                      request.getIncludeBlocks(),
                      request.getIncludeHidden(),
                      call,
                      calls.timer("ListStatus"),
                      start));
            });
  }

  /** A ListStatus stream whose pages start once its directory is ready to be listed. */
  private static final class ListingStream implements Runnable {
    private volatile DirectoryListing pages;
    private volatile boolean cancelled;

    /** gRPC's on-ready handler: the client has room for more. */
    @Override
    public void run() {
      DirectoryListing p = pages;
      if (p != null) {
        p.run();
      }
    }

    void cancel() {
      cancelled = true;
      DirectoryListing p = pages;
      if (p != null) {
        p.cancel();
      }
    }

    void start(DirectoryListing p) {
      pages = p;
      if (cancelled) {
        p.cancel();
      } else {
        p.run();
      }
    }
  }

  @Override
  public void createDirectory(
      CreateDirectoryRequest request, StreamObserver<CreateDirectoryResponse> observer) {
    calls.unaryAsync(
        "CreateDirectory",
        observer,
        () ->
            namespace
                .createDirectory(
                    new Namespace.CreateDirectory(
                        PathNames.normalize(request.getPath()),
                        request.getRecursive(),
                        request.getAllowExists(),
                        request.getMode(),
                        request.getOwner(),
                        request.getGroup()))
                .thenApply(d -> CreateDirectoryResponse.newBuilder().setDirectory(d).build()));
  }

  @Override
  public void createFile(CreateFileRequest request, StreamObserver<CreateFileResponse> observer) {
    calls.unaryAsync(
        "CreateFile",
        observer,
        () ->
            namespace
                .createFile(
                    new Namespace.CreateFile(
                        PathNames.normalize(request.getPath()),
                        request.getRecursive(),
                        request.getOverwrite(),
                        request.getBlockSize(),
                        request.getMode(),
                        request.getOwner(),
                        request.getGroup(),
                        request.getNewVersion(),
                        request.getPersistenceState(),
                        request.getLease() && !request.getNewVersion()))
                .thenApply(
                    f -> {
                      WriterLeases l = leases.get();
                      if (l != null && request.getLease() && !request.getNewVersion()) {
                        l.grant(f.getFileId());
                      }
                      return CreateFileResponse.newBuilder().setFile(f).build();
                    }));
  }

  @Override
  public void createSpecialFile(
      CreateSpecialFileRequest request, StreamObserver<CreateSpecialFileResponse> observer) {
    calls.unaryAsync(
        "CreateSpecialFile",
        observer,
        () ->
            namespace
                .posix()
                .createSpecialFile(
                    PathNames.normalize(request.getPath()),
                    request.getFileType(),
                    request.getMode(),
                    request.getOwner(),
                    request.getGroup(),
                    request.getSymlinkTarget(),
                    request.getRdev())
                .thenApply(f -> CreateSpecialFileResponse.newBuilder().setFile(f).build()));
  }

  @Override
  public void createHardLink(
      CreateHardLinkRequest request, StreamObserver<CreateHardLinkResponse> observer) {
    calls.unaryAsync(
        "CreateHardLink",
        observer,
        () ->
            namespace
                .posix()
                .createHardLink(
                    PathNames.normalize(request.getExistingPath()),
                    PathNames.normalize(request.getPath()))
                .thenApply(f -> CreateHardLinkResponse.newBuilder().setFile(f).build()));
  }

  /**
   * Sets mode, owner, group, modification time, extended attributes and/or time to live of a path.
   * They are kept in the namespace only (journaled with the inode) and never written to the under
   * store; a time to live needs metadata layout 2 (see {@link Namespace#setAttribute}).
   */
  @Override
  public void setAttribute(
      SetAttributeRequest request, StreamObserver<SetAttributeResponse> observer) {
    calls.unaryAsync(
        "SetAttribute",
        observer,
        () ->
            namespace
                .setAttribute(PathNames.normalize(request.getPath()), AttributeChange.of(request))
                .thenApply(f -> SetAttributeResponse.newBuilder().setFile(f).build()));
  }

  @Override
  public void completeFile(
      CompleteFileRequest request, StreamObserver<CompleteFileResponse> observer) {
    calls.unaryAsync(
        "CompleteFile",
        observer,
        () ->
            namespace
                .completeFile(
                    PathNames.normalize(request.getPath()),
                    request.getFileId(),
                    request.getLength(),
                    request.getUfsFingerprint(),
                    CompletedAttributes.of(request))
                .thenApply(f -> CompleteFileResponse.newBuilder().setFile(f).build()));
  }

  @Override
  public void commitNewFile(
      CommitNewFileRequest request, StreamObserver<CommitNewFileResponse> observer) {
    calls.unaryAsync(
        "CommitNewFile",
        observer,
        () ->
            namespace
                .commitNewFile(
                    new Namespace.CreateFile(
                        PathNames.normalize(request.getPath()),
                        false,
                        false,
                        request.getBlockSize(),
                        request.getMode(),
                        request.getOwner(),
                        request.getGroup(),
                        false,
                        PersistenceState.PERSISTENCE_PERSISTED,
                        false),
                    request.getUfsPath(),
                    request.getMountId(),
                    request.getLength(),
                    request.getUfsFingerprint(),
                    CompletedAttributes.of(request))
                .thenApply(f -> CommitNewFileResponse.newBuilder().setFile(f).build()));
  }

  @Override
  public void delete(DeleteRequest request, StreamObserver<DeleteResponse> observer) {
    calls.unaryAsync(
        "Delete",
        observer,
        () ->
            namespace
                .delete(
                    PathNames.normalize(request.getPath()),
                    new Namespace.Delete(
                        request.getRecursive(),
                        request.getFileId(),
                        request.getUnlessVisibleChildren(),
                        null))
                .thenApply(x -> DeleteResponse.getDefaultInstance()));
  }

  @Override
  public void rename(RenameRequest request, StreamObserver<RenameResponse> observer) {
    calls.unaryAsync(
        "Rename",
        observer,
        () ->
            namespace
                .rename(
                    PathNames.normalize(request.getSrcPath()),
                    PathNames.normalize(request.getDstPath()),
                    request.getReplace())
                .thenApply(x -> RenameResponse.getDefaultInstance()));
  }

  @Override
  public void mount(MountRequest request, StreamObserver<MountResponse> observer) {
    calls.unaryAsync(
        "Mount",
        observer,
        () ->
            namespace
                .mounts()
                .mount(
                    PathNames.normalize(request.getPath()), request.getUfsUri(),
                    request.getOptionsMap(), request.getReadOnly())
                .thenApply(
                    m ->
                        MountResponse.newBuilder()
                            .setMount(MountOptionPolicy.view(m, false, false))
                            .build()));
  }

  @Override
  public void unmount(UnmountRequest request, StreamObserver<UnmountResponse> observer) {
    calls.unaryAsync(
        "Unmount",
        observer,
        () ->
            namespace
                .mounts()
                .unmount(PathNames.normalize(request.getPath()))
                .thenApply(x -> UnmountResponse.getDefaultInstance()));
  }

  @Override
  public void listMounts(ListMountsRequest request, StreamObserver<ListMountsResponse> observer) {
    calls.unary(
        "ListMounts",
        observer,
        () ->
            ListMountsResponse.newBuilder()
                .addAllMounts(
                    namespace
                        .mounts()
                        .listMounts(request.getIncludeSecrets(), request.getStoreOptionsOnly()))
                .addAllHealth(namespace.mounts().health())
                .build());
  }

  @Override
  public void getFileBlocks(
      GetFileBlocksRequest request, StreamObserver<GetFileBlocksResponse> observer) {
    calls.unaryAsync(
        "GetFileBlocks",
        observer,
        () -> namespace.fileBlocks(PathNames.normalize(request.getPath())));
  }

  @Override
  public void free(FreeRequest request, StreamObserver<FreeResponse> observer) {
    calls.unaryAsync(
        "Free",
        observer,
        () -> namespace.free(PathNames.normalize(request.getPath()), request.getRecursive()));
  }

  @Override
  public void getWorkers(GetWorkersRequest request, StreamObserver<GetWorkersResponse> observer) {
    calls.unary(
        "GetWorkers",
        observer,
        () -> GetWorkersResponse.newBuilder().addAllWorkers(workers.workers()).build());
  }

  @Override
  public void renewLeases(
      RenewLeasesRequest request, StreamObserver<RenewLeasesResponse> observer) {
    calls.unary(
        "RenewLeases",
        observer,
        () -> {
          WriterLeases l = leases.get();
          // Between leaders (nothing to renew yet): every lease is kept, none reported lapsed.
          List<Long> lapsed = l == null ? List.of() : l.renew(request.getFileIdsList());
          return RenewLeasesResponse.newBuilder().addAllLapsedFileIds(lapsed).build();
        });
  }

  @Override
  public void checkpoint(CheckpointRequest request, StreamObserver<CheckpointResponse> observer) {
    calls.unary(
        "Checkpoint",
        observer,
        () -> CheckpointResponse.newBuilder().setSequence(journal.checkpoint()).build());
  }

  @Override
  public void getMasterInfo(
      GetMasterInfoRequest request, StreamObserver<GetMasterInfoResponse> observer) {
    calls.unary(
        "GetMasterInfo",
        observer,
        () ->
            GetMasterInfoResponse.newBuilder()
                .setRelease(Version.RELEASE)
                .setJournalFormatVersion(Version.LAYOUT_VERSION)
                .setStartTimeMs(startTimeMs)
                .setJournalSequence(journal.lastSequence())
                .setLastCheckpointSequence(journal.lastCheckpointSequence())
                .setInodeCount(journal.store().inodeCount())
                .setProtocolVersion(Version.PROTOCOL_VERSION)
                .setLayoutVersion(journal.store().layoutVersion())
                .setAddress(journal.selfAddress())
                .setLeader(journal.isLeader())
                .addAllClients(clients.clients())
                .build());
  }

  /** Streams the namespace's changes to a client that caches statuses (see {@link ChangeFeed}). */
  @Override
  public void watchChanges(
      WatchChangesRequest request, StreamObserver<WatchChangesResponse> observer) {
    if (request.getAfterSequence() < 0) {
      observer.onError(
          GrpcErrors.toStatus(
              StrataException.invalidArgument(
                  "Negative change sequence "
                      + request.getAfterSequence()
                      + ": give 0 or the sequence of the last change seen")));
      return;
    }
    changes.watch(
        request.getAfterSequence(), (ServerCallStreamObserver<WatchChangesResponse>) observer);
  }

  @Override
  public void loadMetadata(
      LoadMetadataRequest request, StreamObserver<LoadMetadataProgress> observer) {
    long start = System.nanoTime();
    ServerCallStreamObserver<LoadMetadataProgress> call =
        (ServerCallStreamObserver<LoadMetadataProgress>) observer;
    AtomicBoolean cancelled = new AtomicBoolean();
    call.setOnCancelHandler(() -> cancelled.set(true));
    String path;
    SyncInterval sync;
    try {
      path = PathNames.normalize(request.getPath());
      sync = interval(request.hasSyncIntervalMs(), request.getSyncIntervalMs());
    } catch (StrataException e) {
      calls.timer("LoadMetadata").record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      observer.onError(GrpcErrors.toStatus(e));
      return;
    }
    // A shutdown interrupts the walk's thread: it stops as if the client had gone.
    BooleanSupplier stop = () -> cancelled.get() || Thread.currentThread().isInterrupted();
    Runnable walk =
        () -> {
          try {
            namespace.loadMetadata(
                path,
                sync,
                stop,
                progress -> {
                  if (!cancelled.get()) {
                    call.onNext(progress);
                  }
                });
            if (!cancelled.get()) {
              call.onCompleted();
            }
          } catch (Exception e) {
            if (!(e instanceof StrataException)) {
              LOG.warn("LoadMetadata of {} failed: {}", path, e.toString(), e);
            }
            if (!cancelled.get()) {
              call.onError(GrpcErrors.toStatus(e));
            }
          } finally {
            calls.timer("LoadMetadata").record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
          }
        };
    try {
      loadExecutor.execute(walk);
    } catch (RejectedExecutionException e) {
      calls.timer("LoadMetadata").record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      observer.onError(
          GrpcErrors.toStatus(
              StrataException.unavailable(
                  "The master is shutting down; retry the metadata load of "
                      + path
                      + " on its restart",
                  e)));
    }
  }
}
