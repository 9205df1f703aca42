package io.strata.worker;

import io.strata.common.conf.StrataConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** Configuration of an in-JVM worker for tests: everything under one folder, ports picked. */
final class TestWorkers {
  private TestWorkers() {}

  static StrataConfig config(Path dir, int masterPort, Map<String, String> extra) {
    Map<String, String> c = new HashMap<>();
    c.put("strata.home", dir.resolve("home").toString());
    c.put("strata.master.hostname", "127.0.0.1");
    c.put("strata.master.rpc.port", Integer.toString(masterPort));
    c.put("strata.worker.bind.host", "127.0.0.1");
    c.put("strata.worker.rpc.port", "0");
    c.put("strata.worker.data.port", "0");
    c.put("strata.worker.web.port", "0");
    c.put("strata.worker.tier.mem.dir", dir.resolve("mem").toString());
    c.put("strata.worker.tier.mem.capacity", "8MB");
    c.put("strata.worker.tier.ssd.dir", dir.resolve("ssd").toString());
    c.put("strata.worker.tier.ssd.capacity", "16MB");
    c.put("strata.worker.tier.hdd.capacity", "0");
    c.put("strata.worker.heartbeat.interval", "100ms");
    c.put("strata.worker.register.retry.max.interval", "200ms");
    c.put("strata.worker.master.rpc.timeout", "5s");
    c.put("strata.worker.data.threads", "2");
    c.put("strata.worker.read.ufs.threads", "2");
    c.put("strata.worker.read.ufs.chunk.size", "64KB");
    c.put("strata.worker.read.miss.cache.threads", "1");
    // Tests that want the scrubber start one themselves.
    c.put("strata.worker.scrub.rate", "0");
    c.putAll(extra);
    return StrataConfig.load(c);
  }
}
