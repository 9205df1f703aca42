package io.strata.client;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.strata.common.BlockIds;
import io.strata.common.NameOrder;
import io.strata.common.PathNames;
import io.strata.proto.BlockInfo;
import io.strata.proto.BlockLocation;
import io.strata.proto.CheckpointRequest;
import io.strata.proto.CheckpointResponse;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CompleteFileResponse;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateDirectoryResponse;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.CreateFileResponse;
import io.strata.proto.DeleteRequest;
import io.strata.proto.DeleteResponse;
import io.strata.proto.FileInfo;
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
import io.strata.proto.MountInfo;
import io.strata.proto.MountRequest;
import io.strata.proto.MountResponse;
import io.strata.proto.RenameRequest;
import io.strata.proto.RenameResponse;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.SetAttributeResponse;
import io.strata.proto.UnmountRequest;
import io.strata.proto.UnmountResponse;
import io.strata.proto.WorkerInfo;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-memory stand-in for the master's FileSystemMaster service: a namespace of FileInfo records,
 * block locations set by the test, a worker list, and a record of the calls that tests assert on
 * (CompleteFile, Delete, pages streamed).
 */
public final class TestMaster extends FileSystemMasterGrpc.FileSystemMasterImplBase {
  /** By path in the master's listing order, so that a folder's children list in that order. */
  private final TreeMap<String, FileInfo> inodes = new TreeMap<>(NameOrder.COMPARATOR);

  private final Map<Long, List<BlockLocation>> locations = new TreeMap<>();
  private final List<MountInfo> mounts = new ArrayList<>();
  private final AtomicLong nextId = new AtomicLong(2);
  private final String ufsRoot;
  public volatile List<WorkerInfo> workers = List.of();
  public final List<CompleteFileRequest> completed = new CopyOnWriteArrayList<>();
  public final List<String> deleted = new CopyOnWriteArrayList<>();
  public final AtomicInteger pagesSent = new AtomicInteger();
  public final AtomicBoolean listingCancelled = new AtomicBoolean();
  public final List<GetStatusRequest> statusRequests = new CopyOnWriteArrayList<>();
  public final List<ListStatusRequest> listRequests = new CopyOnWriteArrayList<>();
  public final List<ListMountsRequest> mountRequests = new CopyOnWriteArrayList<>();
  public final List<LoadMetadataRequest> loadRequests = new CopyOnWriteArrayList<>();
  public final List<CreateDirectoryRequest> mkdirRequests = new CopyOnWriteArrayList<>();
  public final List<CreateFileRequest> createRequests = new CopyOnWriteArrayList<>();
  public final List<SetAttributeRequest> attributeRequests = new CopyOnWriteArrayList<>();
  private String syntheticDir;
  private int syntheticCount;

  public TestMaster(String ufsRoot) {
    this.ufsRoot = ufsRoot;
    inodes.put(
        "/",
        FileInfo.newBuilder()
            .setFileId(1)
            .setPath("/")
            .setName("")
            .setDirectory(true)
            .setMode(0755)
            .setComplete(true)
            .setUfsPath(ufsRoot)
            .setMountId(1)
            .build());
    mounts.add(MountInfo.newBuilder().setMountId(1).setPath("/").setUfsUri(ufsRoot).build());
  }

  public synchronized FileInfo addFile(String path, long length, long blockSize, String ufsPath) {
    FileInfo f =
        FileInfo.newBuilder()
            .setFileId(nextId.getAndIncrement())
            .setPath(path)
            .setName(PathNames.name(path))
            .setLength(length)
            .setBlockSize(blockSize)
            .setMode(0644)
            .setOwner("alice")
            .setGroup("staff")
            .setComplete(true)
            .setUfsPath(ufsPath)
            .setMountId(1)
            .setUfsFingerprint(fingerprintOf(ufsPath, length))
            .setBlockCount(BlockIds.blockCount(length, blockSize))
            .setModificationTimeMs(1_700_000_000_000L)
            .build();
    inodes.put(path, f);
    return f;
  }

  /**
   * The fingerprint the under store gives a file that exists in a local folder, as a metadata load
   * records it (reads check it); a made-up one for a file that exists nowhere.
   */
  private static String fingerprintOf(String ufsPath, long length) {
    try {
      return new LocalUnderFileSystem().getStatus(ufsPath).fingerprint();
    } catch (IOException | RuntimeException e) {
      return length + ":1";
    }
  }

  public synchronized void put(FileInfo f) {
    inodes.put(f.getPath(), f);
  }

  public synchronized void setLocations(long blockId, List<BlockLocation> where) {
    locations.put(blockId, where);
  }

  /** A directory whose children are generated page by page, never stored. */
  public synchronized void addSyntheticDirectory(String path, int count) {
    inodes.put(
        path,
        FileInfo.newBuilder()
            .setFileId(nextId.getAndIncrement())
            .setPath(path)
            .setName(PathNames.name(path))
            .setDirectory(true)
            .setComplete(true)
            .build());
    syntheticDir = path;
    syntheticCount = count;
  }

  public static String syntheticName(int i) {
    return String.format("entry-%07d-%s", i, "x".repeat(120));
  }

  public synchronized boolean has(String path) {
    return inodes.containsKey(path);
  }

  private synchronized FileInfo lookup(String path) {
    FileInfo f = inodes.get(path);
    if (f == null) {
      throw Status.NOT_FOUND.withDescription("Path does not exist: " + path).asRuntimeException();
    }
    return f;
  }

  private synchronized List<FileInfo> children(String dir, String startAfter, int max) {
    List<FileInfo> out = new ArrayList<>();
    if (dir.equals(syntheticDir)) {
      int start = startAfter.isEmpty() ? 0 : Integer.parseInt(startAfter.substring(6, 13)) + 1;
      for (int i = start; i < syntheticCount && out.size() < max; i++) {
        String name = syntheticName(i);
        out.add(
            FileInfo.newBuilder()
                .setFileId(1_000_000 + i)
                .setName(name)
                .setPath(PathNames.join(dir, name))
                .setLength(i)
                .setComplete(true)
                .build());
      }
      return out;
    }
    String prefix = dir.equals("/") ? "/" : dir + "/";
    for (Map.Entry<String, FileInfo> e : inodes.tailMap(prefix, false).entrySet()) {
      if (!e.getKey().startsWith(prefix) || out.size() >= max) {
        break;
      }
      String rest = e.getKey().substring(prefix.length());
      if (!rest.contains("/") && NameOrder.compare(rest, startAfter) > 0) {
        out.add(e.getValue());
      }
    }
    return out;
  }

  @Override
  public void getStatus(GetStatusRequest r, StreamObserver<GetStatusResponse> out) {
    statusRequests.add(r);
    try {
      out.onNext(GetStatusResponse.newBuilder().setFile(lookup(r.getPath())).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void listStatus(ListStatusRequest r, StreamObserver<ListStatusResponse> out) {
    listRequests.add(r);
    try {
      FileInfo dir = lookup(r.getPath());
      if (!dir.getDirectory()) {
        out.onNext(ListStatusResponse.newBuilder().addFiles(dir).build());
        out.onCompleted();
        return;
      }
      int pageSize = r.getPageSize() > 0 ? r.getPageSize() : 100;
      ServerCallStreamObserver<ListStatusResponse> call =
          (ServerCallStreamObserver<ListStatusResponse>) out;
      String[] after = {r.getStartAfter()};
      boolean[] done = {false};
      call.setOnCancelHandler(() -> listingCancelled.set(true));
      call.setOnReadyHandler(
          () -> {
            while (!done[0] && call.isReady() && !call.isCancelled()) {
              List<FileInfo> page = children(r.getPath(), after[0], pageSize);
              if (page.isEmpty()) {
                done[0] = true;
                call.onCompleted();
                return;
              }
              after[0] = page.get(page.size() - 1).getName();
              call.onNext(ListStatusResponse.newBuilder().addAllFiles(page).build());
              pagesSent.incrementAndGet();
            }
          });
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void createDirectory(
      CreateDirectoryRequest r, StreamObserver<CreateDirectoryResponse> out) {
    mkdirRequests.add(r);
    try {
      FileInfo d = mkdir(r.getPath(), r.getRecursive(), r.getAllowExists());
      out.onNext(CreateDirectoryResponse.newBuilder().setDirectory(d).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  private synchronized FileInfo mkdir(String path, boolean recursive, boolean allowExists) {
    FileInfo existing = inodes.get(path);
    if (existing != null) {
      if (existing.getDirectory() && allowExists) {
        return existing;
      }
      throw Status.ALREADY_EXISTS
          .withDescription("Path already exists: " + path)
          .asRuntimeException();
    }
    String parent = PathNames.parent(path);
    if (!inodes.containsKey(parent)) {
      if (!recursive) {
        throw Status.NOT_FOUND
            .withDescription("Path does not exist: " + parent)
            .asRuntimeException();
      }
      mkdir(parent, true, true);
    }
    FileInfo d =
        FileInfo.newBuilder()
            .setFileId(nextId.getAndIncrement())
            .setPath(path)
            .setName(PathNames.name(path))
            .setDirectory(true)
            .setMode(0755)
            .setOwner("alice")
            .setGroup("staff")
            .setComplete(true)
            .setModificationTimeMs(1_700_000_000_000L)
            .build();
    inodes.put(path, d);
    return d;
  }

  @Override
  public void createFile(CreateFileRequest r, StreamObserver<CreateFileResponse> out) {
    createRequests.add(r);
    try {
      FileInfo f;
      synchronized (this) {
        if (inodes.containsKey(r.getPath()) && !r.getOverwrite()) {
          throw Status.ALREADY_EXISTS
              .withDescription("Path already exists: " + r.getPath())
              .asRuntimeException();
        }
        f =
            FileInfo.newBuilder()
                .setFileId(nextId.getAndIncrement())
                .setPath(r.getPath())
                .setName(PathNames.name(r.getPath()))
                .setComplete(false)
                .setBlockSize(r.getBlockSize() > 0 ? r.getBlockSize() : 1 << 20)
                .setMode(r.getMode() > 0 ? r.getMode() : 0644)
                .setUfsPath(ufsRoot + r.getPath())
                .setMountId(1)
                .build();
        inodes.put(r.getPath(), f);
      }
      out.onNext(CreateFileResponse.newBuilder().setFile(f).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  /** Sets what the request gives on the stored FileInfo, as the master would. */
  @Override
  public void setAttribute(SetAttributeRequest r, StreamObserver<SetAttributeResponse> out) {
    attributeRequests.add(r);
    try {
      FileInfo f;
      synchronized (this) {
        FileInfo.Builder b = lookup(r.getPath()).toBuilder();
        if (r.hasMode()) {
          b.setMode(r.getMode());
        }
        if (r.hasOwner()) {
          b.setOwner(r.getOwner());
        }
        if (r.hasGroup()) {
          b.setGroup(r.getGroup());
        }
        if (r.hasModificationTimeMs()) {
          b.setModificationTimeMs(r.getModificationTimeMs());
        }
        if (r.hasTtlMs()) {
          b.setTtlMs(r.getTtlMs()).setTtlAction(r.getTtlAction());
        }
        f = b.build();
        inodes.put(r.getPath(), f);
      }
      out.onNext(SetAttributeResponse.newBuilder().setFile(f).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void completeFile(CompleteFileRequest r, StreamObserver<CompleteFileResponse> out) {
    try {
      FileInfo f;
      synchronized (this) {
        f =
            lookup(r.getPath()).toBuilder()
                .setComplete(true)
                .setLength(r.getLength())
                .setUfsFingerprint(r.getUfsFingerprint())
                .build();
        inodes.put(r.getPath(), f);
      }
      completed.add(r);
      out.onNext(CompleteFileResponse.newBuilder().setFile(f).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void delete(DeleteRequest r, StreamObserver<DeleteResponse> out) {
    try {
      synchronized (this) {
        lookup(r.getPath());
        if (!children(r.getPath(), "", 1).isEmpty() && !r.getRecursive()) {
          throw Status.FAILED_PRECONDITION
              .withDescription(
                  "Directory is not empty: "
                      + r.getPath()
                      + " (delete it with everything below it: `strata fs rm -R`)")
              .asRuntimeException();
        }
        inodes.keySet().removeIf(p -> PathNames.isUnder(p, r.getPath()));
      }
      deleted.add(r.getPath());
      out.onNext(DeleteResponse.getDefaultInstance());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void rename(RenameRequest r, StreamObserver<RenameResponse> out) {
    try {
      synchronized (this) {
        lookup(r.getSrcPath()); // fails with NOT_FOUND when the source is missing
        if (inodes.containsKey(r.getDstPath())) {
          throw Status.ALREADY_EXISTS
              .withDescription("Path already exists: " + r.getDstPath())
              .asRuntimeException();
        }
        for (String p : new ArrayList<>(inodes.keySet())) {
          if (PathNames.isUnder(p, r.getSrcPath())) {
            FileInfo moved = inodes.remove(p);
            String to = r.getDstPath() + p.substring(r.getSrcPath().length());
            inodes.put(to, moved.toBuilder().setPath(to).setName(PathNames.name(to)).build());
          }
        }
      }
      out.onNext(RenameResponse.getDefaultInstance());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void mount(MountRequest r, StreamObserver<MountResponse> out) {
    try {
      MountInfo m;
      synchronized (this) {
        m =
            MountInfo.newBuilder()
                .setMountId(nextId.getAndIncrement())
                .setPath(r.getPath())
                .setUfsUri(r.getUfsUri())
                .putAllOptions(r.getOptionsMap())
                .setReadOnly(r.getReadOnly())
                .build();
        mounts.add(m);
        inodes.put(
            r.getPath(),
            FileInfo.newBuilder()
                .setFileId(nextId.getAndIncrement())
                .setPath(r.getPath())
                .setName(PathNames.name(r.getPath()))
                .setDirectory(true)
                .setComplete(true)
                .build());
      }
      out.onNext(MountResponse.newBuilder().setMount(m).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void unmount(UnmountRequest r, StreamObserver<UnmountResponse> out) {
    try {
      synchronized (this) {
        if (!mounts.removeIf(m -> m.getPath().equals(r.getPath()))) {
          throw Status.NOT_FOUND
              .withDescription("Not a mount point: " + r.getPath())
              .asRuntimeException();
        }
        inodes.keySet().removeIf(p -> PathNames.isUnder(p, r.getPath()));
      }
      out.onNext(UnmountResponse.getDefaultInstance());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public synchronized void listMounts(ListMountsRequest r, StreamObserver<ListMountsResponse> out) {
    mountRequests.add(r);
    try {
      out.onNext(ListMountsResponse.newBuilder().addAllMounts(mounts).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void getFileBlocks(GetFileBlocksRequest r, StreamObserver<GetFileBlocksResponse> out) {
    try {
      GetFileBlocksResponse.Builder b = GetFileBlocksResponse.newBuilder();
      synchronized (this) {
        FileInfo f = lookup(r.getPath());
        b.setFile(f);
        if (!f.getDirectory()) {
          for (int i = 0; i < BlockIds.blockCount(f.getLength(), f.getBlockSize()); i++) {
            long id = BlockIds.blockId(f.getFileId(), i);
            long offset = i * f.getBlockSize();
            b.addBlocks(
                BlockInfo.newBuilder()
                    .setBlockId(id)
                    .setOffset(offset)
                    .setLength(Math.min(f.getBlockSize(), f.getLength() - offset))
                    .addAllLocations(locations.getOrDefault(id, List.of())));
          }
        }
      }
      out.onNext(b.build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void free(FreeRequest r, StreamObserver<FreeResponse> out) {
    try {
      lookup(r.getPath());
      out.onNext(FreeResponse.newBuilder().setBlocksFreed(2).setBytesFreed(3 << 20).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void getWorkers(GetWorkersRequest r, StreamObserver<GetWorkersResponse> out) {
    try {
      out.onNext(GetWorkersResponse.newBuilder().addAllWorkers(workers).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void checkpoint(CheckpointRequest r, StreamObserver<CheckpointResponse> out) {
    try {
      out.onNext(CheckpointResponse.newBuilder().setSequence(42).build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  @Override
  public void getMasterInfo(GetMasterInfoRequest r, StreamObserver<GetMasterInfoResponse> out) {
    try {
      out.onNext(
          GetMasterInfoResponse.newBuilder()
              .setRelease("test")
              .setInodeCount(inodes.size())
              .build());
      out.onCompleted();
    } catch (io.grpc.StatusRuntimeException e) {
      out.onError(e);
    }
  }

  /**
   * Counts the files and directories below the path: one progress message half-way (after the
   * directories) and a last one with done set.
   */
  @Override
  public void loadMetadata(LoadMetadataRequest r, StreamObserver<LoadMetadataProgress> out) {
    loadRequests.add(r);
    long files = 0;
    long dirs = 0;
    long bytes = 0;
    synchronized (this) {
      if (!inodes.containsKey(r.getPath())) {
        out.onError(
            Status.NOT_FOUND
                .withDescription("Path does not exist: " + r.getPath())
                .asRuntimeException());
        return;
      }
      for (Map.Entry<String, FileInfo> e : inodes.entrySet()) {
        if (PathNames.isUnder(e.getKey(), r.getPath())) {
          if (e.getValue().getDirectory()) {
            dirs++;
          } else {
            files++;
            bytes += e.getValue().getLength();
          }
        }
      }
    }
    out.onNext(LoadMetadataProgress.newBuilder().setDirectories(dirs).setElapsedMs(1000).build());
    out.onNext(
        LoadMetadataProgress.newBuilder()
            .setFiles(files)
            .setDirectories(dirs)
            .setBytes(bytes)
            .setElapsedMs(2000)
            .setDone(true)
            .build());
    out.onCompleted();
  }
}
