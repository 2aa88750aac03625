// What RpmpClient.clusterCounters returns: librpmp's cluster client counters (ClusterCounters
// in rpmp/cluster.h), a snapshot. Read by applications and the Spark plugin's metrics.
package io.rpmp.client;

/** Counters of one cluster client since it connected (or a sum of several: {@link #plus}). */
public final class ClusterCounters {
  /** All counters zero: the sum of no clients. */
  public static final ClusterCounters ZERO = new ClusterCounters(0, 0, 0, 0, 0, 0, 0);

  private final long serverConnections;
  private final long stagedCopies;
  private final long stagedBytes;
  private final long failoverRetries;
  private final long sessionsOpened;
  private final long sessionsReestablished;
  private final long sessionRefusals;

  public ClusterCounters(long serverConnections, long stagedCopies, long stagedBytes,
      long failoverRetries) {
    this(serverConnections, stagedCopies, stagedBytes, failoverRetries, 0, 0, 0);
  }

  public ClusterCounters(long serverConnections, long stagedCopies, long stagedBytes,
      long failoverRetries, long sessionsOpened, long sessionsReestablished,
      long sessionRefusals) {
    this.serverConnections = serverConnections;
    this.stagedCopies = stagedCopies;
    this.stagedBytes = stagedBytes;
    this.failoverRetries = failoverRetries;
    this.sessionsOpened = sessionsOpened;
    this.sessionsReestablished = sessionsReestablished;
    this.sessionRefusals = sessionRefusals;
  }

  /** Connections to rpmp-servers opened (each: an endpoint, its buffers, a session). */
  public long serverConnections() {
    return serverConnections;
  }

  /** Writes and reads moved through one extra copy (buffer of another server's connection). */
  public long stagedCopies() {
    return stagedCopies;
  }

  /** Bytes of those copies. */
  public long stagedBytes() {
    return stagedBytes;
  }

  /** Calls sent again after a failover answer, the namespace's placement refreshed first. */
  public long failoverRetries() {
    return failoverRetries;
  }

  /** Sessions opened with servers (HELLOs that succeeded, the first ones included). */
  public long sessionsOpened() {
    return sessionsOpened;
  }

  /** Of them, sessions opened to replace one the server refused, expired or lost. */
  public long sessionsReestablished() {
    return sessionsReestablished;
  }

  /** Replies saying a session had ended (closed, expired, evicted, crowded out, dropped, unknown). */
  public long sessionRefusals() {
    return sessionRefusals;
  }

  /** The counters of this and {@code other} added up (e.g. over the clients of one JVM). */
  public ClusterCounters plus(ClusterCounters other) {
    return new ClusterCounters(serverConnections + other.serverConnections,
        stagedCopies + other.stagedCopies, stagedBytes + other.stagedBytes,
        failoverRetries + other.failoverRetries, sessionsOpened + other.sessionsOpened,
        sessionsReestablished + other.sessionsReestablished,
        sessionRefusals + other.sessionRefusals);
  }

  @Override
  public String toString() {
    return "ClusterCounters{serverConnections=" + serverConnections + ", stagedCopies="
        + stagedCopies + ", stagedBytes=" + stagedBytes + ", failoverRetries="
        + failoverRetries + ", sessionsOpened=" + sessionsOpened + ", sessionsReestablished="
        + sessionsReestablished + ", sessionRefusals=" + sessionRefusals + "}";
  }
}
