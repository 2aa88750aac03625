// A per-application credential the proxies issued (RpmpAdmin.issueCredential,
// docs/security.md "Tenants"): lets its holder act only on namespaces under prefix()
// until expiry(). The token is a secret: toString() redacts it, and it never goes into
// logs or configuration; pass it to RpmpClientOptions.token. Immutable and
// Serializable (the Spark plugin ships it to executors inside a shuffle handle).
package io.rpmp.client;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/** A token with its prefix, application and expiry. */
public final class RpmpCredential implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String token;
  private final String prefix;
  private final String app;
  private final long expiryUnix;

  public RpmpCredential(String token, String prefix, String app, long expiryUnix) {
    this.token = token;
    this.prefix = prefix;
    this.app = app;
    this.expiryUnix = expiryUnix;
  }

  static RpmpCredential fromNative(byte[][] parts) {
    return new RpmpCredential(
        utf8(parts[0]), utf8(parts[1]), utf8(parts[2]), Long.parseLong(utf8(parts[3])));
  }

  private static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  /** The secret token ("v1...."): for RpmpClientOptions.token only. */
  public String token() {
    return token;
  }

  /** Namespaces this credential may act on start with this ("*": all). */
  public String prefix() {
    return prefix;
  }

  public String app() {
    return app;
  }

  public Instant expiry() {
    return Instant.ofEpochSecond(expiryUnix);
  }

  @Override
  public String toString() {
    return "RpmpCredential(prefix=" + prefix + ", app=" + app + ", expiry=" + expiry() + ", token=<redacted>)";
  }
}
