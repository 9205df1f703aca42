package io.strata.common.conf;

/** Keys read by the S3 proxy process. */
public final class ProxyKeys {
  private ProxyKeys() {}

  public static final ConfigKey HOSTNAME =
      ConfigKey.string(
          "strata.proxy.hostname",
          "127.0.0.1",
          "Host name or address that S3 clients use to reach the proxy.");
  public static final ConfigKey BIND_HOST =
      ConfigKey.string(
          "strata.proxy.bind.host",
          "127.0.0.1",
          "Address the proxy's S3 and HTTP endpoints listen on.");
  public static final ConfigKey PORT =
      ConfigKey.integer(
          "strata.proxy.port",
          19400,
          "port",
          "TCP port of the S3 endpoint (HTTPS when strata.proxy.tls.certificate and"
              + " strata.proxy.tls.key are set, else HTTP).");
  public static final ConfigKey TLS_CERTIFICATE =
      ConfigKey.string(
          "strata.proxy.tls.certificate",
          "",
          "PEM file of the S3 endpoint's certificate chain (its own certificate first); with"
              + " strata.proxy.tls.key the endpoint serves HTTPS only (TLS 1.2 and 1.3), empty"
              + " serves plain HTTP.");
  public static final ConfigKey TLS_KEY =
      ConfigKey.string(
          "strata.proxy.tls.key",
          "",
          "PEM file of the private key of strata.proxy.tls.certificate, unencrypted PKCS#8"
              + " (-----BEGIN PRIVATE KEY-----); empty serves plain HTTP.");
  public static final ConfigKey WEB_PORT =
      ConfigKey.integer(
          "strata.proxy.web.port",
          19401,
          "port",
          "TCP port of the proxy's HTTP endpoint (/metrics, /health).");
  public static final ConfigKey DOMAIN =
      ConfigKey.string(
          "strata.proxy.domain",
          "",
          "Domain of virtual-host-style addressing: a request to BUCKET.<domain> names the bucket"
              + " in its Host header; empty accepts path-style addressing only (/BUCKET/KEY).");
  public static final ConfigKey BUCKET_MAP =
      ConfigKey.string(
          "strata.proxy.bucket.map",
          "",
          "Buckets mapped to fixed namespace paths, as name=/path,name=/path; a bucket not named"
              + " here is the top-level folder of its name.");
  public static final ConfigKey CREDENTIALS_FILE =
      ConfigKey.string(
          "strata.proxy.credentials.file",
          "${strata.home}/conf/proxy-credentials",
          "File of the access keys the proxy accepts, one 'access-key secret-key strata-user' a"
              + " line (mode 0600); `strata local up` writes one for the local user.");
  public static final ConfigKey ANONYMOUS =
      ConfigKey.bool(
          "strata.proxy.anonymous",
          false,
          "Let the namespace's modes decide for requests that carry no signature, as for the user"
              + " 'nobody'; off, an unsigned request may only read objects and list buckets whose"
              + " ACL is public-read or public-read-write, and write in public-read-write"
              + " buckets.");
  public static final ConfigKey BUCKET_MODE =
      ConfigKey.string(
          "strata.proxy.bucket.mode",
          "0700",
          "Mode (octal) of a bucket created through the proxy without x-amz-acl: 0700 keeps it"
              + " the owner's, as S3's private ACL does; 0750 lets the owner's group list and"
              + " read it. Objects written without x-amz-acl are 0600 plus their bucket's group"
              + " read bit (a bucket of mode 0750 gets objects of mode 0640).");
  public static final ConfigKey SIGV2_ENABLED =
      ConfigKey.bool(
          "strata.proxy.auth.sigv2.enabled",
          true,
          "Accept requests signed with AWS Signature Version 2 (header 'AWS key:signature', or"
              + " presigned URLs with AWSAccessKeyId, Signature and Expires), as boto3 presigns by"
              + " default; off, they get 400 InvalidRequest asking for Signature Version 4.");
  public static final ConfigKey REGION =
      ConfigKey.string(
          "strata.proxy.region",
          "us-east-1",
          "Region the proxy reports (GetBucketLocation, errors); signatures of any region are"
              + " accepted.");
  public static final ConfigKey HANDLER_THREADS =
      ConfigKey.integer(
          "strata.proxy.handler.threads",
          256,
          "threads",
          "Threads that serve requests (each serves one request at a time, blocking on the"
              + " cluster); requests beyond them wait in a queue of strata.proxy.handler.queue.");
  public static final ConfigKey HANDLER_QUEUE =
      ConfigKey.integer(
          "strata.proxy.handler.queue",
          1024,
          "requests",
          "Requests that may wait for a handler thread; further requests get 503 SlowDown.");
  public static final ConfigKey IO_THREADS =
      ConfigKey.integer(
          "strata.proxy.io.threads",
          0,
          "threads",
          "Netty event-loop threads of the S3 endpoint; 0 means twice the cores.");
  public static final ConfigKey CHUNK_SIZE =
      ConfigKey.bytes(
          "strata.proxy.chunk.size",
          "256KB",
          "Bytes read from the cluster and sent to a client at a time; a download holds at most"
              + " this plus the connection's write buffer (strata.proxy.write.buffer.size).");
  public static final ConfigKey WRITE_BUFFER_SIZE =
      ConfigKey.bytes(
          "strata.proxy.write.buffer.size",
          "1MB",
          "Bytes a connection may have queued for a slow client before the proxy stops reading"
              + " from the cluster for it (back-pressure).");
  public static final ConfigKey MAX_HEADER_SIZE =
      ConfigKey.bytes(
          "strata.proxy.max.header.size",
          "64KB",
          "Largest request line plus headers; a larger request gets 400.");
  public static final ConfigKey IDLE_TIMEOUT =
      ConfigKey.duration(
          "strata.proxy.idle.timeout", "5min", "A connection with no traffic this long is closed.");
  public static final ConfigKey MULTIPART_MAX_AGE =
      ConfigKey.duration(
          "strata.proxy.multipart.max.age",
          "7d",
          "Multipart uploads left neither completed nor aborted this long are removed with their"
              + " parts.");
  public static final ConfigKey MULTIPART_CLEAN_INTERVAL =
      ConfigKey.duration(
          "strata.proxy.multipart.clean.interval",
          "1h",
          "How often the proxy looks for abandoned multipart uploads.");
  public static final ConfigKey LIFECYCLE_SWEEP_INTERVAL =
      ConfigKey.duration(
          "strata.proxy.lifecycle.sweep.interval",
          "1h",
          "How often the proxy walks the buckets that have lifecycle rules, to put the rules into"
              + " effect on objects written through the mount or the shell and to expire current"
              + " versions of versioned buckets behind delete markers.");
  public static final ConfigKey LIFECYCLE_DAY =
      ConfigKey.duration(
          "strata.proxy.lifecycle.day",
          "1d",
          "How long a day of a lifecycle rule lasts. Only for tests, which shorten it to see"
              + " expiry in seconds; with a day other than 24 hours expiry times are not rounded to"
              + " midnight UTC.");
  public static final ConfigKey METADATA_CACHE_SIZE =
      ConfigKey.longKey(
          "strata.proxy.metadata.cache.size",
          50_000,
          "objects",
          "Objects whose status (with block locations) the proxy keeps for GET and HEAD, each until"
              + " the master's change stream says it changed; 0 asks the master at every read.");
  public static final ConfigKey METADATA_CACHE_TTL =
      ConfigKey.duration(
          "strata.proxy.metadata.cache.ttl",
          "1s",
          "How long a kept status serves reads while the change stream from the master is down"
              + " (then the proxy asks again, as a client without the stream would).");
  public static final ConfigKey PERMISSION_CACHE_TTL =
      ConfigKey.duration(
          "strata.proxy.permission.cache.ttl",
          "1s",
          "How long the proxy reuses a folder's owner, group and mode when it checks access.");
}
