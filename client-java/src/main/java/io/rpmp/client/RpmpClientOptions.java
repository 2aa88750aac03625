// Settings for RpmpClient.connect (mirror of librpmp's ClientOptions). Mutable builder
// style: create, set, pass to connect; the client copies the values.
package io.rpmp.client;

import java.time.Duration;

/** Options of one client connection. Defaults match librpmp's. */
public final class RpmpClientOptions {
  private String provider = "tcp;ofi_rxm";
  private Duration timeout = Duration.ofSeconds(30);
  private String name = "rpmp-java";
  private long bufferCacheBytes = 256L << 20;
  private int maxInflight = 64;

  public static RpmpClientOptions defaults() {
    return new RpmpClientOptions();
  }

  /** libfabric provider, the same as the server's. */
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
}
