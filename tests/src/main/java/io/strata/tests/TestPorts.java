package io.strata.tests;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for the servers a test starts in other processes. A port is only known free when it is
 * picked; the process binds it later, so the pick must be one nothing else takes meanwhile. Ports
 * the kernel hands out for {@code bind(0)} and for outgoing connections come from its ephemeral
 * range, where any connection the test's processes open can take one in between; these are picked
 * below that range instead, and never twice in one test JVM.
 */
public final class TestPorts {
  private static final int LOWEST = 10_000;
  private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

  private TestPorts() {}

  /** A port free on {@code host} now, outside the kernel's ephemeral range where it can be. */
  public static int free(String host) throws IOException {
    InetAddress address = InetAddress.getByName(host);
    int below = ephemeralLow();
    if (below - LOWEST >= 1_000) {
      for (int i = 0; i < 200; i++) {
        int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
        if (!GIVEN.add(port)) {
          continue;
        }
        try (ServerSocket s = new ServerSocket()) {
          s.bind(new InetSocketAddress(address, port), 1);
          return port;
        } catch (IOException taken) {
          // Someone holds it: pick another.
        }
      }
    }
    try (ServerSocket s = new ServerSocket(0, 1, address)) {
      GIVEN.add(s.getLocalPort());
      return s.getLocalPort();
    }
  }

  /** The first port of the kernel's ephemeral range (Linux), or LOWEST where unknown. */
  private static int ephemeralLow() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      return Integer.parseInt(range.split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return LOWEST;
    }
  }
}
