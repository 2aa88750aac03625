// Namespace administration and counters of an RpmpClient (RpmpClient.admin()), the Java
// side of C++'s rpmp/cluster.h ClusterControl plus Client::Stat: create, describe, touch and
// delete cluster namespaces, the cluster client's counters, the live nodes' space, the
// server's (or the cluster's summed) statistics, and per-application credentials from the
// proxies. Natives: rpmp_admin_jni.cc, rpmp_admin_credential_jni.cc.
// Any thread may call any method; after the client is closed every method throws
// IllegalStateException. Callers: applications, rpmp tools and the Spark plugin.
package io.rpmp.client;

import static io.rpmp.client.NativeClient.utf8;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Admin calls of one client; cluster-only calls fail with FAILED_PRECONDITION otherwise. */
public final class RpmpAdmin {
  private final NativeClient nc;

  RpmpAdmin(NativeClient nc) {
    this.nc = nc;
  }

  /** True for a client made by connectCluster. */
  public boolean isCluster() {
    return nc.call(RpmpAdmin::nativeIsCluster);
  }

  /**
   * Counters of this cluster client since it connected (cluster mode only; else
   * FAILED_PRECONDITION): connections to rpmp-servers opened, writes and reads moved through
   * one extra copy because their buffer belonged to another server's connection (and their
   * bytes), calls sent again after a failover answer, and sessions opened, re-established and
   * refused.
   */
  public ClusterCounters clusterCounters() throws RpmpException {
    long[] v = nc.call(RpmpAdmin::nativeClusterCounters);
    return new ClusterCounters(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
  }

  /**
   * Space of each LIVE node as the proxy's node map holds it (from the nodes' heartbeats):
   * one proxy call, no server asked. Cluster clients only (FAILED_PRECONDITION otherwise).
   */
  public List<NodeSpace> liveNodeSpace() throws RpmpException {
    long[] v = nc.call(RpmpAdmin::nativeLiveNodeSpace);
    List<NodeSpace> out = new ArrayList<>(v.length / 3);
    for (int i = 0; i + 2 < v.length; i += 3) out.add(new NodeSpace(v[i], v[i + 1], v[i + 2]));
    return out;
  }

  /**
   * Creates namespace {@code name} with {@code replicas} copies, writes acknowledged after
   * {@code minReplicas} (0 = replicas) and expiry after {@code ttl} untouched (ZERO = never).
   * Idempotent for equal options; RpmpException ALREADY_EXISTS for different ones,
   * FAILED_PRECONDITION when fewer nodes are live than replicas. Cluster clients only
   * (FAILED_PRECONDITION otherwise).
   */
  public NamespaceInfo createNamespace(String name, int replicas, int minReplicas, Duration ttl)
      throws RpmpException {
    if (replicas < 1 || minReplicas < 0 || minReplicas > replicas) {
      throw new IllegalArgumentException(
          "replicas " + replicas + ", minReplicas " + minReplicas);
    }
    long[] info =
        nc.call(
            h -> nativeCreateNamespace(h, utf8(name), replicas, minReplicas, ttl.getSeconds()));
    return NamespaceInfo.fromNative(name, info);
  }

  /** Options and placement of a namespace; RpmpNotFoundException when there is none. */
  public NamespaceInfo describeNamespace(String name) throws RpmpException {
    return NamespaceInfo.fromNative(name, nc.call(h -> nativeDescribeNamespace(h, utf8(name))));
  }

  /**
   * Deletes namespace {@code name} and, with {@code recursive}, every {@code name/...}, on
   * every node holding them; returns the names deleted. RpmpNotFoundException when no
   * namespace matched.
   */
  public List<String> deleteNamespaces(String name, boolean recursive) throws RpmpException {
    byte[][] names = nc.call(h -> nativeDeleteNamespaces(h, utf8(name), recursive));
    List<String> out = new ArrayList<>(names.length);
    for (byte[] n : names) {
      out.add(new String(n, StandardCharsets.UTF_8));
    }
    return out;
  }

  /** Resets a namespace's ttl clock. */
  public void touchNamespace(String name) throws RpmpException {
    nc.run(h -> nativeTouchNamespace(h, utf8(name)));
  }

  /** The server's statistics; for a cluster client, every answering node's summed. */
  public ServerStats stat() throws RpmpException {
    return nc.call(RpmpAdmin::nativeStat);
  }

  /**
   * A per-application credential for namespaces under {@code prefix} (ending in "/"; "*"
   * with an admin certificate) from the proxy leader, valid for {@code ttl} (ZERO = 24 h).
   * FAILED_PRECONDITION when the proxies issue none (started without --token-secret-file)
   * or for a server-direct client; ALREADY_EXISTS when another application holds an
   * overlapping prefix. This client keeps its own credentials.
   */
  public RpmpCredential issueCredential(String prefix, String app, Duration ttl)
      throws RpmpException {
    return RpmpCredential.fromNative(
        nc.call(h -> nativeIssueCredential(h, utf8(prefix), utf8(app), ttl.getSeconds())));
  }

  /**
   * A new credential for the prefix of {@code current} (which must still be valid), valid
   * for {@code ttl} (ZERO = 24 h); PERMISSION_DENIED for an expired or foreign one.
   */
  public RpmpCredential renewCredential(RpmpCredential current, Duration ttl)
      throws RpmpException {
    return RpmpCredential.fromNative(
        nc.call(h -> nativeRenewCredential(h, utf8(current.token()), ttl.getSeconds())));
  }

  private static native byte[][] nativeIssueCredential(
      long h, byte[] prefix, byte[] app, long ttlSeconds) throws RpmpException;

  private static native byte[][] nativeRenewCredential(long h, byte[] token, long ttlSeconds)
      throws RpmpException;

  private static native boolean nativeIsCluster(long h);

  private static native long[] nativeClusterCounters(long h) throws RpmpException;

  private static native long[] nativeLiveNodeSpace(long h) throws RpmpException;

  private static native long[] nativeCreateNamespace(
      long h, byte[] name, int replicas, int minReplicas, long ttlSeconds) throws RpmpException;

  private static native long[] nativeDescribeNamespace(long h, byte[] name)
      throws RpmpException;

  private static native byte[][] nativeDeleteNamespaces(long h, byte[] name, boolean recursive)
      throws RpmpException;

  private static native void nativeTouchNamespace(long h, byte[] name) throws RpmpException;

  private static native ServerStats nativeStat(long h) throws RpmpException;
}
