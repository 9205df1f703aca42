package io.strata.common.rpc;

import io.grpc.Metadata;

/**
 * The gRPC metadata clients and masters exchange beside the messages, named once for both sides:
 * which client call a request belongs to (the same on every retry of one call, so a master does not
 * apply a retried change twice), and which master leads (the trailer a master that does not lead
 * refuses a call with, which clients follow).
 */
public final class MasterHeaders {
  private MasterHeaders() {}

  /** Request header: a random id, fixed for the life of one client. */
  public static final Metadata.Key<String> CLIENT_ID =
      Metadata.Key.of("strata-client-id", Metadata.ASCII_STRING_MARSHALLER);

  /** Request header: the number of the logical call, unique within its client. */
  public static final Metadata.Key<String> CALL_ID =
      Metadata.Key.of("strata-call-id", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * Request header: which attempt of its call a request is, from 1. A master that finds in the
   * under store what a create asks for, and no record of the call, takes it for the work of an
   * earlier attempt whose journal entry was lost with a failed leader when this number is above 1.
   * Absent means 1.
   */
  public static final Metadata.Key<String> CALL_ATTEMPT =
      Metadata.Key.of("strata-call-attempt", Metadata.ASCII_STRING_MARSHALLER);

  /** Trailer of a refusal by a master that does not lead: the leader's host:port. */
  public static final Metadata.Key<String> LEADER =
      Metadata.Key.of("strata-leader", Metadata.ASCII_STRING_MARSHALLER);
}
