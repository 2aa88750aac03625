// Settings for RpmpClient.connect (mirror of librpmp's ClientOptions). Mutable builder
// style: create, set, pass to connect; the client copies the values.
package io.rpmp.client;

import java.time.Duration;

/** Options of one client connection. Defaults match librpmp's. */
public final class RpmpClientOptions {
  private String provider = "auto";
  private Duration timeout = Duration.ofSeconds(30);
  private String name = "rpmp-java";
  private long bufferCacheBytes = 256L << 20;
  private int maxInflight = 64;
  private int connections = 0;
  private byte[] secret = new byte[0];
  private String token = "";
  // Cluster mode only (connectCluster); defaults match librpmp's ClusterOptions.
  private Duration retryFor = Duration.ofSeconds(30);
  private Duration proxyTimeout = Duration.ofSeconds(2);
  private int defaultReplicas = 2;
  private int defaultMinReplicas = 0;
  private Duration defaultTtl = Duration.ZERO;

  public static RpmpClientOptions defaults() {
    return new RpmpClientOptions();
  }

  /**
   * libfabric provider: "auto" (the default: verbs;ofi_rxm where the host has RDMA, else
   * tcp;ofi_rxm, else whichever the server answers on) or a provider the server serves.
   */
  public RpmpClientOptions provider(String provider) {
    this.provider = provider;
    return this;
  }

  /** Every call fails with RpmpTimeoutException after this long. */
  public RpmpClientOptions timeout(Duration timeout) {
    this.timeout = timeout;
    return this;
  }

  /** Shows in server logs. */
  public RpmpClientOptions name(String name) {
    this.name = name;
    return this;
  }

  /** Registered memory kept for reuse by the client's buffer pool. */
  public RpmpClientOptions bufferCacheBytes(long bytes) {
    this.bufferCacheBytes = bytes;
    return this;
  }

  /** Requests in flight at once (capped by the server). */
  public RpmpClientOptions maxInflight(int n) {
    this.maxInflight = n;
    return this;
  }

  /**
   * Connections to each server's data shards (docs/sharding.md): 0 (the default) = one per
   * shard, at most 4, unless the environment variable RPMP_CLIENT_CONNECTIONS sets a number;
   * a number above the shards opens several per shard. Each calling thread keeps to one
   * connection, so its calls stay in order. 0 to 64.
   */
  public RpmpClientOptions connections(int n) {
    if (n < 0 || n > 64) {
      throw new IllegalArgumentException("connections must be 0 (automatic) to 64, not " + n);
    }
    this.connections = n;
    return this;
  }

  /**
   * The cluster secret proved at HELLO (docs/security.md); empty (the default) = the file
   * named by the environment variable RPMP_SECRET_FILE, or none. Never logged.
   */
  public RpmpClientOptions secret(byte[] secret) {
    this.secret = secret == null ? new byte[0] : secret.clone();
    return this;
  }

  /**
   * A tenant token ("v1.PREFIX.APP.EXPIRY.MAC", docs/security.md "Tenants"): used instead
   * of the cluster secret; the servers let this client act only on namespaces under
   * PREFIX. Empty (the default) = the file named by RPMP_TOKEN_FILE when no secret is
   * set, else the secret. Never logged.
   */
  public RpmpClientOptions token(String token) {
    this.token = token == null ? "" : token;
    return this;
  }

  /** Cluster mode: how long a call keeps retrying through failovers before it fails. */
  public RpmpClientOptions retryFor(Duration d) {
    this.retryFor = d;
    return this;
  }

  /** Cluster mode: timeout of one proxy RPC. */
  public RpmpClientOptions proxyTimeout(Duration d) {
    this.proxyTimeout = d;
    return this;
  }

  /**
   * Cluster mode: options of namespaces created implicitly by a first write (replicas R,
   * minReplicas 0 = R, ttl ZERO = never expires). Explicit ones: createNamespace.
   */
  public RpmpClientOptions namespaceDefaults(int replicas, int minReplicas, Duration ttl) {
    if (replicas < 1 || minReplicas < 0 || minReplicas > replicas) {
      throw new IllegalArgumentException(
          "replicas " + replicas + ", minReplicas " + minReplicas);
    }
    this.defaultReplicas = replicas;
    this.defaultMinReplicas = minReplicas;
    this.defaultTtl = ttl;
    return this;
  }

  public Duration retryFor() {
    return retryFor;
  }

  public Duration proxyTimeout() {
    return proxyTimeout;
  }

  public int defaultReplicas() {
    return defaultReplicas;
  }

  public int defaultMinReplicas() {
    return defaultMinReplicas;
  }

  public Duration defaultTtl() {
    return defaultTtl;
  }

  public String provider() {
    return provider;
  }

  public Duration timeout() {
    return timeout;
  }

  public String name() {
    return name;
  }

  public long bufferCacheBytes() {
    return bufferCacheBytes;
  }

  public int maxInflight() {
    return maxInflight;
  }

  public int connections() {
    return connections;
  }

  /** The tenant token (empty when none was set). */
  public String token() {
    return token;
  }

  /** A copy of the secret (empty when none was set). */
  public byte[] secret() {
    return secret.clone();
  }
}
