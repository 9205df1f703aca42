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
 * named, so that {@code strata fsadmin upgrade status} can show which mounts, proxies, workers
 * and applications still run an older release. A process is known by the remote address of its
 * connection: it is dropped when that connection ends (so an upgraded mount's old process goes
 * with its connection), and after {@code forgetAfter} without a call. Bounded; thread-safe.
 */
public final class ClientDirectory {
  private static final int MAX_CLIENTS = 10_000;

  private final Cache<String, ConnectedClient> clients;

  public ClientDirectory(Duration forgetAfter) {
    this.clients = Caffeine.newBuilder().maximumSize(MAX_CLIENTS)
        .expireAfterWrite(forgetAfter).build();
  }

  /** Records one call (a {@link io.strata.server.common.VersionCheck} listener). */
  public void served(Caller caller, Metadata headers, SocketAddress remote) {
    String clientId = headers.get(MasterHeaders.CLIENT_ID);
    String host = remote instanceof InetSocketAddress a ? a.getHostString() + ":" + a.getPort()
        : String.valueOf(remote);
    clients.put(host, ConnectedClient.newBuilder().setClientId(clientId == null ? "" : clientId)
        .setKind(caller.kind()).setRelease(caller.release())
        .setProtocolVersion(caller.protocol()).setHost(host)
        .setLastSeenMs(System.currentTimeMillis()).build());
  }

  /** Forgets the process of a connection that ended (a gRPC transport filter's call). */
  public void disconnected(SocketAddress remote) {
    if (remote instanceof InetSocketAddress a) {
      clients.invalidate(a.getHostString() + ":" + a.getPort());
    }
  }

  /** Every process connected, by kind and host. */
  public List<ConnectedClient> clients() {
    return clients.asMap().values().stream()
        .sorted(Comparator.comparing(ConnectedClient::getKind)
            .thenComparing(ConnectedClient::getHost))
        .toList();
  }
}
