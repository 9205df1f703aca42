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
 * The processes that called this master lately, with the release and protocol their version
 * headers named, so that {@code strata fsadmin upgrade status} can show which mounts, proxies,
 * workers and applications still run an older release. A process is known by its client id
 * (one per client instance), else by its kind and host; it is forgotten after
 * {@code forgetAfter} without a call. Bounded; thread-safe.
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
    String key = clientId != null && !clientId.isEmpty() ? clientId : caller.kind() + "@" + host;
    clients.put(key, ConnectedClient.newBuilder().setClientId(clientId == null ? "" : clientId)
        .setKind(caller.kind()).setRelease(caller.release())
        .setProtocolVersion(caller.protocol()).setHost(host)
        .setLastSeenMs(System.currentTimeMillis()).build());
  }

  /** Every process seen lately, by kind and host. */
  public List<ConnectedClient> clients() {
    return clients.asMap().values().stream()
        .sorted(Comparator.comparing(ConnectedClient::getKind)
            .thenComparing(ConnectedClient::getHost))
        .toList();
  }
}
