package io.strata.common.rpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.strata.common.Version;

/**
 * The request headers that tell a server which release and protocol its caller speaks, and what
 * kind of process it is, so that servers can refuse callers outside their protocol window and
 * masters can show every process's release ({@code strata fsadmin upgrade status}). They are gRPC
 * metadata, beside the messages, so no message changes for them and a server that does not read
 * them (release 0.1.0) is unaffected.
 */
public final class VersionHeaders {
  /** Request header: the caller's release, such as 0.2.0. */
  public static final Metadata.Key<String> RELEASE =
      Metadata.Key.of("strata-release", Metadata.ASCII_STRING_MARSHALLER);

  /** Request header: the caller's RPC protocol version ({@link Version#PROTOCOL_VERSION}). */
  public static final Metadata.Key<String> PROTOCOL =
      Metadata.Key.of("strata-protocol", Metadata.ASCII_STRING_MARSHALLER);

  /** Request header: what the caller is: client, fuse, proxy, shell, worker or master. */
  public static final Metadata.Key<String> KIND =
      Metadata.Key.of("strata-client-kind", Metadata.ASCII_STRING_MARSHALLER);

  /** The protocol of a caller that sends no version: release 0.1.0's. */
  public static final int UNVERSIONED_PROTOCOL = 1;

  /** How a caller that sends no version is shown: a release before 0.2.0. */
  public static final String UNVERSIONED_RELEASE = "0.1.x";

  private static final String PROTOCOL_TEXT = Integer.toString(Version.PROTOCOL_VERSION);
  private static volatile String processKind = "client";

  private VersionHeaders() {}

  /**
   * Names what this process is, for the kind header of its calls; a process's main sets it before
   * it connects (default "client": an application using the client library).
   */
  public static void setProcessKind(String kind) {
    processKind = kind;
  }

  /** What this process said it is. */
  public static String processKind() {
    return processKind;
  }

  /** Adds this process's release, protocol and kind to every call of a channel. */
  public static ClientInterceptor clientInterceptor() {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions callOptions, Channel next) {
        return new SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
          @Override
          public void start(Listener<R> responseListener, Metadata headers) {
            headers.put(RELEASE, Version.RELEASE);
            headers.put(PROTOCOL, PROTOCOL_TEXT);
            headers.put(KIND, processKind);
            super.start(responseListener, headers);
          }
        };
      }
    };
  }

  /** What a call's headers say of its caller. */
  public record Caller(String release, int protocol, String kind, boolean versioned) {
    /** Reads the headers; a caller without them is one of release 0.1.0. */
    public static Caller of(Metadata headers) {
      String protocol = headers.get(PROTOCOL);
      if (protocol == null) {
        return new Caller(
            UNVERSIONED_RELEASE, UNVERSIONED_PROTOCOL, orUnknown(headers.get(KIND)), false);
      }
      int version;
      try {
        version = Integer.parseInt(protocol.trim());
      } catch (NumberFormatException e) {
        version = -1;
      }
      return new Caller(
          orUnknown(headers.get(RELEASE)), version, orUnknown(headers.get(KIND)), true);
    }

    private static String orUnknown(String s) {
      return s == null || s.isEmpty() ? "unknown" : s;
    }
  }

  /**
   * Why a server of this release refuses a caller, or null when it serves it: a server serves its
   * own protocol and the one before. The message names both versions and which side to upgrade.
   */
  public static String refusal(Caller caller, String server) {
    int p = caller.protocol();
    if (p >= Version.OLDEST_SERVED_PROTOCOL_VERSION && p <= Version.PROTOCOL_VERSION) {
      return null;
    }
    String who =
        "This "
            + server
            + " (release "
            + Version.RELEASE
            + ", RPC protocol "
            + Version.PROTOCOL_VERSION
            + ") serves callers of protocols "
            + Version.OLDEST_SERVED_PROTOCOL_VERSION
            + " to "
            + Version.PROTOCOL_VERSION
            + ", but this "
            + caller.kind()
            + " runs release "
            + caller.release()
            + " (protocol "
            + (p < 0 ? "unreadable" : Integer.toString(p))
            + "). ";
    if (p > Version.PROTOCOL_VERSION) {
      return who
          + "Upgrade the servers first: masters, then workers, then clients "
          + "(docs/rolling-upgrade.md).";
    }
    return who
        + "Upgrade this "
        + caller.kind()
        + " to release "
        + Version.RELEASE
        + " or the one before it; releases more than one apart do not work together.";
  }
}
