package io.strata.client.master;

import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Masters on 127.0.0.1 of which one leads, or none (as during an election). The others refuse every
 * call as a follower does -- UNAVAILABLE, and the leader's address in the {@code strata-leader}
 * trailer when there is one -- except the methods any master serves. A paused master answers
 * nothing, like a process stopped with SIGSTOP. The request headers of every call are recorded by
 * master. Shared with the worker's tests.
 */
public final class FakeMasterGroup implements AutoCloseable {
  private static final Metadata.Key<String> LEADER = io.strata.common.rpc.MasterHeaders.LEADER;

  private final List<Server> servers = new ArrayList<>();
  private final List<String> addresses = new ArrayList<>();
  private final Map<String, List<Metadata>> headers = new ConcurrentHashMap<>();
  private final Set<String> paused = ConcurrentHashMap.newKeySet();
  private final Set<String> servedByAny;
  private volatile String leader;

  /**
   * @param size how many masters
   * @param services what a master serves (when it leads), given its address once bound
   * @param servedByAny full names of the methods that followers serve too
   */
  public FakeMasterGroup(
      int size, Function<Supplier<String>, List<BindableService>> services, Set<String> servedByAny)
      throws IOException {
    this.servedByAny = servedByAny;
    try {
      for (int i = 0; i < size; i++) {
        AtomicReference<String> self = new AtomicReference<>();
        NettyServerBuilder builder =
            NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0));
        for (BindableService s : services.apply(self::get)) {
          builder.addService(ServerInterceptors.intercept(s, new Gate(self)));
        }
        Server server = builder.build().start();
        servers.add(server);
        self.set("127.0.0.1:" + server.getPort());
        addresses.add(self.get());
      }
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Every master's address, host:port. */
  public List<String> addresses() {
    return List.copyOf(addresses);
  }

  /** The address of master {@code i}. */
  public String address(int i) {
    return addresses.get(i);
  }

  /** Makes {@code address} the leader; null means none (an election). */
  public void lead(String address) {
    leader = address;
  }

  /** Makes a master answer nothing until {@link #resume}. */
  public void pause(String address) {
    paused.add(address);
  }

  public void resume(String address) {
    paused.remove(address);
  }

  /** The request headers of every call master {@code address} received, in order. */
  public List<Metadata> headers(String address) {
    return headers.computeIfAbsent(address, a -> new CopyOnWriteArrayList<>());
  }

  /** How many calls master {@code address} received. */
  public int calls(String address) {
    return headers(address).size();
  }

  @Override
  public void close() {
    for (Server s : servers) {
      s.shutdownNow();
    }
    try {
      for (Server s : servers) {
        s.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Records each call, then lets the leader serve it, or refuses it as a follower. */
  private final class Gate implements ServerInterceptor {
    private final AtomicReference<String> self;

    Gate(AtomicReference<String> self) {
      this.self = self;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, R> call, Metadata request, ServerCallHandler<Q, R> next) {
      String me = self.get();
      headers(me).add(request);
      if (paused.contains(me)) {
        // Never answered; the caller's deadline ends the call.
        return new ServerCall.Listener<>() {};
      }
      String l = leader;
      if (me.equals(l) || servedByAny.contains(call.getMethodDescriptor().getFullMethodName())) {
        return next.startCall(call, request);
      }
      Metadata trailers = new Metadata();
      if (l != null) {
        trailers.put(LEADER, l);
      }
      call.close(
          Status.UNAVAILABLE.withDescription(
              "This master ("
                  + me
                  + ") is not the leader"
                  + (l == null ? "; no leader is known" : "; the leader is " + l)),
          trailers);
      return new ServerCall.Listener<>() {};
    }
  }
}
