package io.strata.client;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.client.contract.MasterServiceContract;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.FileSystemMasterGrpc.FileSystemMasterBlockingStub;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The client tests' stand-in master ({@link TestMaster}) keeps the real master's contract. */
class TestMasterContractTest extends MasterServiceContract {
  @TempDir static Path dir;
  private static Server server;
  private static ManagedChannel channel;
  private static FileSystemMasterBlockingStub stub;

  @BeforeAll
  static void start() throws Exception {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(new TestMaster("file://" + dir))
            .build()
            .start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    stub = FileSystemMasterGrpc.newBlockingStub(channel);
  }

  @AfterAll
  static void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Override
  protected FileSystemMasterBlockingStub master() {
    return stub;
  }
}
