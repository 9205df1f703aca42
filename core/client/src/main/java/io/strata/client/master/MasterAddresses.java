package io.strata.client.master;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.ConfigException;
import io.strata.common.conf.StrataConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * The masters a process may call, as host:port of their gRPC services: every entry of {@code
 * strata.master.addresses}, in order and without repeats, or, when that key is empty, the one
 * master at {@code strata.master.hostname:strata.master.rpc.port}. {@code listed} tells the two
 * apart, because error messages name the key the user has to change.
 */
public record MasterAddresses(List<String> all, boolean listed) {
  public MasterAddresses {
    all = List.copyOf(all);
    if (all.isEmpty()) {
      throw new IllegalArgumentException("no master address");
    }
  }

  /** The addresses the configuration names. */
  public static MasterAddresses of(StrataConfig conf) {
    String list = conf.getString(CommonKeys.MASTER_ADDRESSES).trim();
    if (list.isEmpty()) {
      return one(
          conf.getString(CommonKeys.MASTER_HOSTNAME), conf.getInt(CommonKeys.MASTER_RPC_PORT));
    }
    List<String> addresses = new ArrayList<>();
    for (String entry : list.split(",")) {
      String address = entry.trim();
      if (address.isEmpty()) {
        continue;
      }
      if (!isHostPort(address)) {
        throw new ConfigException(
            "Bad value '"
                + list
                + "' for configuration key '"
                + CommonKeys.MASTER_ADDRESSES.name()
                + "': '"
                + address
                + "' is not host:port;"
                + " expected every master's gRPC address as host:port, comma-separated"
                + " (e.g. m1:19200,m2:19200,m3:19200)");
      }
      if (!addresses.contains(address)) {
        addresses.add(address);
      }
    }
    if (addresses.isEmpty()) {
      throw new ConfigException(
          "Bad value '"
              + list
              + "' for configuration key '"
              + CommonKeys.MASTER_ADDRESSES.name()
              + "': no address in it");
    }
    return new MasterAddresses(addresses, true);
  }

  /** The one master at host:port, as a process configured without a list has. */
  public static MasterAddresses one(String host, int port) {
    return new MasterAddresses(List.of(hostPort(host, port)), false);
  }

  /** Several masters (or one) named as strata.master.addresses would name them. */
  public static MasterAddresses listed(List<String> addresses) {
    return new MasterAddresses(addresses, true);
  }

  /** Whether there is more than one master to choose from. */
  public boolean several() {
    return all.size() > 1;
  }

  /** host:port, with an IPv6 host in brackets. */
  static String hostPort(String host, int port) {
    return (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
  }

  /** Whether {@code address} is host:port with a port between 1 and 65535. */
  static boolean isHostPort(String address) {
    int colon = address.lastIndexOf(':');
    if (colon <= 0 || colon == address.length() - 1) {
      return false;
    }
    String host = host(address);
    if (host.isEmpty()
        || host.indexOf(',') >= 0
        || host.chars().anyMatch(Character::isWhitespace)) {
      return false;
    }
    try {
      int port = port(address);
      return port > 0 && port < 65536;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** The host of host:port, without the brackets of an IPv6 address. */
  static String host(String address) {
    String host = address.substring(0, address.lastIndexOf(':'));
    if (host.startsWith("[") && host.endsWith("]")) {
      return host.substring(1, host.length() - 1);
    }
    return host;
  }

  /** The port of host:port. */
  static int port(String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
  }
}
