package io.strata.shell;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.client.TestMaster;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.conf.WorkerKeys;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * A process that stands in for the master in tests of `strata local`: serves the master double on
 * the configured port and reports one live worker at the configured worker address.
 */
public final class FakeMasterMain {
  private FakeMasterMain() {}

  public static void main(String[] args) throws Exception {
    StrataConfig conf = StrataConfig.load();
    TestMaster master = new TestMaster("file:///fake");
    master.workers =
        List.of(
            WorkerInfo.newBuilder()
                .setWorkerId(1)
                .setState(WorkerState.WORKER_LIVE)
                .setAddress(
                    WorkerAddress.newBuilder()
                        .setHost(conf.getString(WorkerKeys.HOSTNAME))
                        .setRpcPort(conf.getInt(WorkerKeys.RPC_PORT))
                        .setDataPort(conf.getInt(WorkerKeys.DATA_PORT))
                        .setWebPort(conf.getInt(WorkerKeys.WEB_PORT)))
                .build());
    Server server =
        NettyServerBuilder.forAddress(
                new InetSocketAddress("127.0.0.1", conf.getInt(CommonKeys.MASTER_RPC_PORT)))
            .addService(master)
            .build()
            .start();
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    server.awaitTermination();
  }
}
