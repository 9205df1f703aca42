package io.strata.master;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.strata.common.PathNames;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.common.rpc.MasterHeaders;
import io.strata.master.file.Namespace;
import io.strata.master.journal.CallHistory;
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
import io.strata.proto.DeleteResponse;
import io.strata.proto.MountInfo;
import io.strata.proto.MountRequest;
import io.strata.proto.MountResponse;
import io.strata.proto.RenameResponse;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.SetAttributeResponse;
import io.strata.proto.UnmountResponse;
import io.strata.server.common.RpcCalls;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Answers a changing call that a client retried after its change was already applied (the answer
 * was lost when the leader failed) from the state the change left, instead of applying it again: a
 * retried create must not fail with "already exists", a retried delete must not fail with "does not
 * exist", and nothing may happen twice. The journal records each change's client and call id
 * ({@link CallHistory}), on every master, so the new leader knows them.
 */
final class RetriedCallReplay implements ServerInterceptor {
  /** Builds the answer of an applied call from its request and the current namespace. */
  @FunctionalInterface
  private interface Answer {
    CompletableFuture<?> answer(Object request, Namespace namespace) throws Exception;
  }

  private static final String FS = "strata.FileSystemMaster/";
  private static final Map<String, Answer> ANSWERS =
      Map.ofEntries(
          Map.entry(
              FS + "CreateDirectory",
              (r, ns) ->
                  ns.getStatus(path(((CreateDirectoryRequest) r).getPath()))
                      .thenApply(
                          f -> CreateDirectoryResponse.newBuilder().setDirectory(f).build())),
          Map.entry(
              FS + "CreateFile",
              (r, ns) -> {
                CreateFileRequest c = (CreateFileRequest) r;
                return (c.getNewVersion()
                        ? ns.versionBeingWritten(path(c.getPath()))
                        : ns.getStatus(path(c.getPath())))
                    .thenApply(f -> CreateFileResponse.newBuilder().setFile(f).build());
              }),
          Map.entry(
              FS + "CompleteFile",
              (r, ns) ->
                  ns.getStatus(path(((CompleteFileRequest) r).getPath()))
                      .thenApply(f -> CompleteFileResponse.newBuilder().setFile(f).build())),
          Map.entry(
              FS + "CommitNewFile",
              (r, ns) ->
                  ns.getStatus(path(((CommitNewFileRequest) r).getPath()))
                      .thenApply(f -> CommitNewFileResponse.newBuilder().setFile(f).build())),
          Map.entry(
              FS + "SetAttribute",
              (r, ns) ->
                  ns.getStatus(path(((SetAttributeRequest) r).getPath()))
                      .thenApply(f -> SetAttributeResponse.newBuilder().setFile(f).build())),
          Map.entry(
              FS + "CreateSpecialFile",
              (r, ns) ->
                  ns.getStatus(path(((CreateSpecialFileRequest) r).getPath()))
                      .thenApply(f -> CreateSpecialFileResponse.newBuilder().setFile(f).build())),
          Map.entry(
              FS + "CreateHardLink",
              (r, ns) ->
                  ns.getStatus(path(((CreateHardLinkRequest) r).getPath()))
                      .thenApply(f -> CreateHardLinkResponse.newBuilder().setFile(f).build())),
          Map.entry(FS + "Delete", (r, ns) -> done(DeleteResponse.getDefaultInstance())),
          Map.entry(FS + "Rename", (r, ns) -> done(RenameResponse.getDefaultInstance())),
          Map.entry(FS + "Unmount", (r, ns) -> done(UnmountResponse.getDefaultInstance())),
          Map.entry(
              FS + "Mount",
              (r, ns) -> {
                String p = path(((MountRequest) r).getPath());
                for (MountInfo m : ns.mounts().listMounts(false, false)) {
                  if (m.getPath().equals(p)) {
                    return done(MountResponse.newBuilder().setMount(m).build());
                  }
                }
                throw StrataException.notFound(p);
              }));

  private static <T> CompletableFuture<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  /** How a call fails when an earlier attempt of it already made its change. */
  private static final Set<Status.Code> REPEAT_FAILURES =
      Set.of(Status.Code.ALREADY_EXISTS, Status.Code.NOT_FOUND);

  private final CallHistory history;
  private final Namespace namespace;

  RetriedCallReplay(CallHistory history, Namespace namespace) {
    this.history = history;
    this.namespace = namespace;
  }

  private static String path(String raw) throws StrataException {
    return PathNames.normalize(raw);
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    Answer answer = ANSWERS.get(call.getMethodDescriptor().getFullMethodName());
    String client = headers.get(MasterHeaders.CLIENT_ID);
    String callIdText = headers.get(MasterHeaders.CALL_ID);
    if (answer == null || client == null || callIdText == null) {
      return next.startCall(call, headers);
    }
    long callId = parse(callIdText);
    if (!history.wasApplied(client, callId)) {
      return applyWatchingForAnEarlierAttempt(call, headers, next, answer, client, callId);
    }
    call.request(1);
    return new ServerCall.Listener<>() {
      @Override
      public void onMessage(Q request) {
        answerFromState(call, answer, request);
      }
    };
  }

  /**
   * Makes the call, but when it fails as a repeat would (the path exists, or is gone) and an
   * earlier attempt of it was applied meanwhile, answers from the state that attempt left. A new
   * leader applies what an earlier leader committed while it starts, so such an attempt can land
   * between the history check above and this attempt's own change.
   */
  private <Q, A> ServerCall.Listener<Q> applyWatchingForAnEarlierAttempt(
      ServerCall<Q, A> call,
      Metadata headers,
      ServerCallHandler<Q, A> next,
      Answer answer,
      String client,
      long callId) {
    AtomicReference<Q> request = new AtomicReference<>();
    ServerCall<Q, A> watched =
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            Q asked = request.get();
            if (asked != null
                && REPEAT_FAILURES.contains(status.getCode())
                && history.wasApplied(client, callId)) {
              answerFromState(call, answer, asked);
              return;
            }
            super.close(status, trailers);
          }
        };
    ServerCall.Listener<Q> listener = next.startCall(watched, headers);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onMessage(Q message) {
        request.set(message);
        super.onMessage(message);
      }
    };
  }

  /** Answers an applied call from the namespace as it is now, and closes it. */
  private <Q, A> void answerFromState(ServerCall<Q, A> call, Answer answer, Q request) {
    CompletableFuture<?> answered;
    try {
      answered = answer.answer(request, namespace);
    } catch (Exception e) {
      answered = CompletableFuture.failedFuture(e);
    }
    // The callback is the last stage: it closes the call, failure included.
    var unused =
        answered.whenComplete(
            (response, error) -> {
              if (error == null) {
                @SuppressWarnings("unchecked")
                A typed = (A) response;
                call.sendHeaders(new Metadata());
                call.sendMessage(typed);
                call.close(Status.OK, new Metadata());
                return;
              }
              Throwable t = RpcCalls.unwrap(error);
              StrataException se =
                  t instanceof StrataException s ? s : StrataException.internal(t.toString(), t);
              io.grpc.StatusRuntimeException status = GrpcErrors.toStatus(se);
              call.close(
                  status.getStatus(),
                  status.getTrailers() == null ? new Metadata() : status.getTrailers());
            });
  }

  private static long parse(String callId) {
    try {
      return Long.parseLong(callId);
    } catch (NumberFormatException e) {
      return Long.MIN_VALUE;
    }
  }
}
