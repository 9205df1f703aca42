package io.strata.proxy;

import io.strata.server.common.ProcessMain;

/** Starts an S3 proxy process from the configuration of this host. */
public final class ProxyMain {
  private ProxyMain() {}

  public static void main(String[] args) {
    ProcessMain.run("proxy", ProxyServer::new);
  }
}
