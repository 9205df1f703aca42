package io.strata.common.conf;

/** Keys that every Strata process reads. */
public final class CommonKeys {
  private CommonKeys() {}

  public static final ConfigKey HOME =
      ConfigKey.string(
          "strata.home",
          "${user.home}/.strata",
          "Folder under which processes keep their state, logs and caches unless told otherwise.");
  public static final ConfigKey CONF_DIR =
      ConfigKey.string(
          "strata.conf.dir", "${strata.home}/conf", "Folder holding strata-site.properties.");
  public static final ConfigKey LOGS_DIR =
      ConfigKey.string(
          "strata.logs.dir",
          "${strata.home}/logs",
          "Folder where server processes write their rotated log files.");
  public static final ConfigKey LOG_FILE =
      ConfigKey.string(
          "strata.log.file",
          "",
          "File a server process logs to, rotated (launchers set it); empty logs to the console.");
  public static final ConfigKey LOG_LEVEL =
      ConfigKey.string(
          "strata.log.level",
          "INFO",
          "Level of the root logger: ERROR, WARN, INFO, DEBUG or TRACE.");
  public static final ConfigKey MASTER_HOSTNAME =
      ConfigKey.string(
          "strata.master.hostname",
          "127.0.0.1",
          "Host name or address that clients and workers use to reach the master.");
  public static final ConfigKey MASTER_RPC_PORT =
      ConfigKey.integer(
          "strata.master.rpc.port", 19200, "port", "TCP port of the master's gRPC service.");
  public static final ConfigKey MASTER_ADDRESSES =
      ConfigKey.string(
          "strata.master.addresses",
          "",
          "Every master's gRPC address as host:port, comma-separated, when masters are highly "
              + "available; clients, workers, the FUSE mount and the proxy find the leader among "
              + "them. Empty means the one master at strata.master.hostname:strata.master.rpc.port.");
}
