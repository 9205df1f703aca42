package io.strata.proxy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.ssl.SslContext;
import io.strata.client.FileSystem;
import io.strata.common.DaemonThreads;
import io.strata.common.conf.ConfigKey;
import io.strata.common.conf.ProxyKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.metrics.MetricNames;
import io.strata.proxy.access.AccessControl;
import io.strata.proxy.access.UserGroups;
import io.strata.proxy.auth.ReloadingCredentials;
import io.strata.proxy.auth.SigV4Verifier;
import io.strata.proxy.auth.SignatureVerifier;
import io.strata.proxy.http.S3HttpServer;
import io.strata.proxy.s3.Buckets;
import io.strata.proxy.s3.MultipartUploads;
import io.strata.proxy.s3.S3Service;
import io.strata.proxy.s3.S3Services;
import io.strata.server.common.ProcessMain;
import io.strata.server.common.ProcessMetricsRegistry;
import io.strata.server.common.WebServer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The S3 proxy process: an HTTP server that speaks S3 over the Strata namespace, a client of the
 * master and workers like the FUSE mount (reads come from the cache, writes go through the workers
 * to the under stores), with its metrics and health endpoint and a cleaner of abandoned multipart
 * uploads. {@link #start} binds everything or fails with the reason; {@link #close} stops it all.
 */
public final class ProxyServer implements ProcessMain.Server {
  private static final Logger LOG = LoggerFactory.getLogger(ProxyServer.class);

  private final StrataConfig conf;
  private final PrometheusMeterRegistry registry = ProcessMetricsRegistry.create();
  private final Deque<AutoCloseable> toClose = new ArrayDeque<>();
  private S3HttpServer http;
  private WebServer web;

  public ProxyServer(StrataConfig conf) {
    this.conf = conf;
  }

  @Override
  public void start() throws Exception {
    // Checked first: a certificate that cannot serve stops the start before anything connects.
    SslContext tls = ProxyTls.fromConfig(conf);
    Buckets buckets = Buckets.parse(conf.getString(ProxyKeys.BUCKET_MAP));
    Path credentialsFile = Path.of(conf.getString(ProxyKeys.CREDENTIALS_FILE));
    ReloadingCredentials credentials = new ReloadingCredentials(credentialsFile);
    boolean anonymous = conf.getBoolean(ProxyKeys.ANONYMOUS);
    if (credentials.size() == 0 && !anonymous) {
      LOG.warn(
          "No access key in {}: every request will be refused until keys are added"
              + " (`strata proxy credentials`), or set strata.proxy.anonymous=true",
          credentialsFile);
    }
    FileSystem fs = FileSystem.connect(conf);
    toClose.push(fs);
    fs.metrics().bindTo(registry);
    S3Services services =
        S3Services.create(
            fs,
            buckets,
            new AccessControl(fs, conf.getDuration(ProxyKeys.PERMISSION_CACHE_TTL), anonymous),
            UserGroups.ofThisMachine(),
            (int) conf.getBytes(ProxyKeys.CHUNK_SIZE),
            conf.getString(ProxyKeys.REGION),
            bucketMode(conf.getString(ProxyKeys.BUCKET_MODE)),
            conf.getLong(ProxyKeys.METADATA_CACHE_SIZE),
            conf.getDuration(ProxyKeys.METADATA_CACHE_TTL),
            positive(conf, ProxyKeys.LIFECYCLE_DAY));
    toClose.push(services);
    boolean sigV2 = conf.getBoolean(ProxyKeys.SIGV2_ENABLED);
    // Unsigned requests pass verification and meet the access checks, which let them read what a
    // public ACL opens (and, with strata.proxy.anonymous, what the modes give 'nobody').
    SignatureVerifier verifier =
        new SignatureVerifier(credentials, Clock.systemUTC(), true, SigV4Verifier.MAX_SKEW, sigV2);
    S3Service service = services.service(verifier, conf.getString(ProxyKeys.DOMAIN), registry);
    http =
        new S3HttpServer(
            new S3HttpServer.Settings(
                conf.getString(ProxyKeys.BIND_HOST),
                conf.getInt(ProxyKeys.PORT),
                conf.getInt(ProxyKeys.IO_THREADS),
                conf.getInt(ProxyKeys.HANDLER_THREADS),
                conf.getInt(ProxyKeys.HANDLER_QUEUE),
                (int) conf.getBytes(ProxyKeys.MAX_HEADER_SIZE),
                (int) conf.getBytes(ProxyKeys.WRITE_BUFFER_SIZE),
                conf.getDuration(ProxyKeys.IDLE_TIMEOUT),
                tls),
            service,
            service);
    http.start();
    toClose.push(http);
    Gauge.builder(MetricNames.PROXY_REQUESTS_ACTIVE, http, S3HttpServer::activeRequests)
        .description("S3 requests being served or waiting for a handler thread")
        .register(registry);

    MultipartUploads multipart = services.multipart();
    Counter expired =
        Counter.builder(MetricNames.PROXY_MULTIPART_EXPIRED)
            .description("Abandoned multipart uploads removed")
            .register(registry);
    Duration maxAge = conf.getDuration(ProxyKeys.MULTIPART_MAX_AGE);
    long every = Math.max(1, conf.getDuration(ProxyKeys.MULTIPART_CLEAN_INTERVAL).toSeconds());
    ScheduledExecutorService cleaner =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("multipart-cleaner"));
    // Runs until the server closes and shuts the cleaner down; nothing waits for it.
    var unused =
        cleaner.scheduleWithFixedDelay(
            () -> {
              try {
                expired.increment(multipart.removeExpired(maxAge));
              } catch (RuntimeException e) {
                LOG.warn("Cleaning abandoned multipart uploads failed: {}", e.toString());
              }
            },
            every,
            every,
            TimeUnit.SECONDS);
    toClose.push(cleaner::shutdownNow);
    services.lifecycleSweep().start(positive(conf, ProxyKeys.LIFECYCLE_SWEEP_INTERVAL), registry);

    web =
        new WebServer(
            conf.getString(ProxyKeys.BIND_HOST), conf.getInt(ProxyKeys.WEB_PORT), registry);
    toClose.push(web);
    LOG.info(
        "S3 proxy serving {} on {}:{} (metrics on :{}), credentials {}, anonymous access {},"
            + " Signature Version 2 {}",
        tls != null ? "https" : "http",
        conf.getString(ProxyKeys.BIND_HOST),
        http.port(),
        web.port(),
        credentialsFile,
        anonymous ? "on" : "off",
        sigV2 ? "on" : "off");
  }

  /** The S3 port bound. */
  public int port() {
    return http.port();
  }

  /** The metrics port bound. */
  public int webPort() {
    return web.port();
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  @Override
  public void close() {
    while (!toClose.isEmpty()) {
      try {
        toClose.pop().close();
      } catch (Exception e) {
        LOG.warn("Error while stopping the proxy: {}", e.toString());
      }
    }
  }

  /** The duration of {@code key}, or a clear error naming the key when it is not positive. */
  private static Duration positive(StrataConfig conf, ConfigKey key) {
    Duration d = conf.getDuration(key);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(
          key.name() + " is " + d + ": give a positive duration, such as " + key.defaultValue());
    }
    return d;
  }

  /** The mode strata.proxy.bucket.mode gives, or a clear error naming the key. */
  static int bucketMode(String octal) {
    try {
      int mode = Integer.parseInt(octal.trim(), 8);
      if (mode >= 0 && mode <= 0777 && (mode & 0700) == 0700) {
        return mode;
      }
    } catch (NumberFormatException e) {
      // Reported below with what the key takes.
    }
    throw new IllegalArgumentException(
        "strata.proxy.bucket.mode is '"
            + octal
            + "': give an octal mode from 0700 to 0777 that leaves the owner rwx, such as 0700"
            + " or 0750");
  }
}
