package io.strata.client;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides whether a worker's host is this machine, so that its block files can be read directly. An
 * address is local when it is a loopback address or belongs to one of this machine's network
 * interfaces. Answers are remembered per host name; a name that does not resolve is not local.
 */
final class LocalHost {
  private static final Map<String, Boolean> KNOWN = new ConcurrentHashMap<>();

  private LocalHost() {}

  static boolean isLocal(String host) {
    Boolean known = KNOWN.get(host);
    if (known == null) {
      known = resolve(host);
      KNOWN.put(host, known);
    }
    return known;
  }

  private static boolean resolve(String host) {
    try {
      InetAddress address = InetAddress.getByName(host);
      return address.isLoopbackAddress()
          || address.isAnyLocalAddress()
          || NetworkInterface.getByInetAddress(address) != null;
    } catch (UnknownHostException | SocketException e) {
      return false;
    }
  }
}
