package io.strata.master.upgrade;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.grpc.Metadata;
import io.strata.common.rpc.MasterHeaders;
import io.strata.common.rpc.VersionHeaders.Caller;
import io.strata.proto.ConnectedClient;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;

/**
 * The processes connected to this master, with the release and protocol their version headers
 * named, so that {@code strata fsadmin upgrade status} can show which mounts, proxies, workers and
 * applications still run an older release. A process is known by the remote address of its
 * connection: it is dropped when that connection ends (so an upgraded mount's old process goes with
 * its connection), and once {@code forgetAfter} passed without a call. Bounded; thread-safe.
 *
 * <p>Every call a master serves passes through {@link #served}, so it costs a lookup and, for a
 * caller already known, a time stamp: the answer's message is built only when asked for.
 */
public final class ClientDirectory {
  private static final int MAX_CLIENTS = 10_000;

  /** One connection's caller; {@code lastSeenMs} is the only part a later call changes. */
  private static final class Seen {
    final Caller caller;
    final String clientId;
    final String host;
    volatile long lastSeenMs;

    Seen(Caller caller, String clientId, String host, long now) {
      this.caller = caller;
      this.clientId = clientId;
      this.host = host;
      this.lastSeenMs = now;
    }
  }

  private final Cache<String, Seen> clients;

  public ClientDirectory(Duration forgetAfter) {
    // Each call's lookup counts as an access, so a connection still calling is never forgotten.
    this.clients =
        Caffeine.newBuilder().maximumSize(MAX_CLIENTS).expireAfterAccess(forgetAfter).build();
  }

  /** Records one call (a {@link io.strata.server.common.VersionCheck} listener). */
  public void served(Caller caller, Metadata headers, SocketAddress remote) {
    String host = hostOf(remote);
    long now = System.currentTimeMillis();
    Seen seen = clients.getIfPresent(host);
    if (seen != null && seen.caller.equals(caller)) {
      seen.lastSeenMs = now;
      return;
    }
    String clientId = headers.get(MasterHeaders.CLIENT_ID);
    clients.put(host, new Seen(caller, clientId == null ? "" : clientId, host, now));
  }

  /** Forgets the process of a connection that ended (a gRPC transport filter's call). */
  public void disconnected(SocketAddress remote) {
    if (remote instanceof InetSocketAddress) {
      clients.invalidate(hostOf(remote));
    }
  }

  private static String hostOf(SocketAddress remote) {
    return remote instanceof InetSocketAddress a
        ? a.getHostString() + ":" + a.getPort()
        : String.valueOf(remote);
  }

  /** Every process connected and heard from within {@code forgetAfter}, by kind and host. */
  public List<ConnectedClient> clients() {
    return clients.asMap().values().stream()
        .map(
            s ->
                ConnectedClient.newBuilder()
                    .setClientId(s.clientId)
                    .setKind(s.caller.kind())
                    .setRelease(s.caller.release())
                    .setProtocolVersion(s.caller.protocol())
                    .setHost(s.host)
                    .setLastSeenMs(s.lastSeenMs)
                    .build())
        .sorted(
            Comparator.comparing(ConnectedClient::getKind).thenComparing(ConnectedClient::getHost))
        .toList();
  }
}
