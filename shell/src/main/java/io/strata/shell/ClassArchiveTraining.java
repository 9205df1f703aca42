package io.strata.shell;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.GetStatusResponse;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The run from which the build makes the command line's class archive (AppCDS, see {@code
 * bin/strata}): the JVM records every class this run loads and maps them, already parsed and
 * verified, into later {@code strata} processes. It runs the commands scripts call most, {@code
 * --version}, {@code fs stat} and {@code fs ls}, with their answers and their failures (a missing
 * path, no master listening), against a master stand-in in this process on loopback, so that the
 * build needs no cluster. Anything a command loads that this run did not is read from the jars as
 * before: the archive only saves time.
 *
 * <p>The build runs it twice. {@code train STAMP} removes the stamp and runs the commands, with the
 * JVM writing the archive as it exits. {@code stamp STAMP CLASSPATH}, run on the new archive with
 * {@code -Xshare:on} (which fails unless the archive maps), writes the stamp: the java binary and
 * the class path the archive is for. The launcher passes the archive only when the stamp matches
 * its own java and class path, so an archive cut short by a stopped build (which would crash the
 * JVM) or made for another JDK or checkout is never used.
 */
public final class ClassArchiveTraining {
  private ClassArchiveTraining() {}

  public static void main(String[] args) throws IOException, InterruptedException {
    Path stamp = Path.of(args[1]);
    if (args[0].equals("stamp")) {
      Path java = Path.of(System.getProperty("java.home"), "bin", "java").toRealPath();
      Files.writeString(stamp, java + "\n" + args[2] + "\n");
      return;
    }
    Files.deleteIfExists(stamp);
    train();
    // gRPC's threads must not keep the JVM (and so the archive's writing) waiting.
    System.exit(0);
  }

  private static void train() throws IOException, InterruptedException {
    StrataShell.prepareProcess();
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress(loopback, 0))
            .addService(new StandIn())
            .build()
            .start();
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, loopback)) {
      closedPort = s.getLocalPort();
    }
    try {
      run(server.getPort(), "--version");
      run(server.getPort(), "fs", "stat", "/f");
      run(server.getPort(), "fs", "ls", "/");
      run(server.getPort(), "fs", "ls", "-h", "/f");
      run(server.getPort(), "fs", "stat", "/missing");
      run(closedPort, "fs", "ls", "/");
      run(server.getPort(), "fs", "ls", "--bad-option");
    } finally {
      server.shutdownNow().awaitTermination();
    }
  }

  private static void run(int port, String... args) {
    Map<String, String> conf =
        Map.of(
            "strata.master.hostname",
            "127.0.0.1",
            "strata.master.rpc.port",
            Integer.toString(port),
            "strata.client.master.retry.max.duration",
            "0s");
    PrintStream sink =
        new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
    try (ShellContext ctx =
        new ShellContext(() -> StrataConfig.load(conf), sink, sink, Map.of(), Map.of())) {
      StrataShell.run(ctx, args);
    }
  }

  /** Answers as a master with one file, {@code /f}, would. */
  private static final class StandIn extends FileSystemMasterGrpc.FileSystemMasterImplBase {
    private static final FileInfo FILE =
        FileInfo.newBuilder()
            .setFileId(2)
            .setPath("/f")
            .setName("f")
            .setLength(3)
            .setBlockSize(64 << 20)
            .setModificationTimeMs(1)
            .setMode(0644)
            .setOwner("root")
            .setGroup("root")
            .setComplete(true)
            .setBlockCount(1)
            .setUfsPath("file:///tmp/f")
            .setMountId(1)
            .build();
    private static final FileInfo ROOT =
        FileInfo.newBuilder()
            .setFileId(1)
            .setPath("/")
            .setDirectory(true)
            .setMode(0755)
            .setOwner("root")
            .setGroup("root")
            .setComplete(true)
            .build();

    @Override
    public void getStatus(GetStatusRequest request, StreamObserver<GetStatusResponse> answer) {
      FileInfo f =
          request.getPath().equals("/") ? ROOT : request.getPath().equals("/f") ? FILE : null;
      if (f == null) {
        answer.onError(
            Status.NOT_FOUND
                .withDescription("Path does not exist: " + request.getPath())
                .asRuntimeException());
        return;
      }
      answer.onNext(GetStatusResponse.newBuilder().setFile(f).build());
      answer.onCompleted();
    }

    @Override
    public void listStatus(ListStatusRequest request, StreamObserver<ListStatusResponse> answer) {
      answer.onNext(ListStatusResponse.newBuilder().addFiles(FILE).build());
      answer.onCompleted();
    }
  }
}
