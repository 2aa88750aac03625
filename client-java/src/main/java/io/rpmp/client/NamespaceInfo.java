// A cluster namespace's options and placement, as returned by RpmpClient.createNamespace
// and describeNamespace (mirror of librpmp's NamespaceInfo). Immutable.
package io.rpmp.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Options and placement of one namespace of an RPMP cluster. */
public final class NamespaceInfo {
  private final String name;
  private final int replicas;
  private final int minReplicas;
  private final Duration ttl;
  private final List<Long> replicaNodes;
  private final long primary;
  private final boolean degraded;

  public NamespaceInfo(
      String name, int replicas, int minReplicas, Duration ttl, List<Long> replicaNodes,
      long primary, boolean degraded) {
    this.name = name;
    this.replicas = replicas;
    this.minReplicas = minReplicas;
    this.ttl = ttl;
    this.replicaNodes = Collections.unmodifiableList(new ArrayList<>(replicaNodes));
    this.primary = primary;
    this.degraded = degraded;
  }

  /** From the native layout {replicas, minReplicas, ttlSeconds, primary, degraded, ids...}. */
  static NamespaceInfo fromNative(String name, long[] v) {
    List<Long> nodes = new ArrayList<>();
    for (int i = 5; i < v.length; i++) {
      nodes.add(v[i]);
    }
    return new NamespaceInfo(
        name, (int) v[0], (int) v[1], Duration.ofSeconds(v[2]), nodes, v[3], v[4] != 0);
  }

  public String name() {
    return name;
  }

  /** Copies of every record (R). */
  public int replicas() {
    return replicas;
  }

  /** Copies before a write is acknowledged; 0 means replicas. */
  public int minReplicas() {
    return minReplicas;
  }

  /** Expiry when untouched this long; ZERO = never. */
  public Duration ttl() {
    return ttl;
  }

  /** Node ids of the placement, in order. */
  public List<Long> replicaNodes() {
    return replicaNodes;
  }

  /** Node id that orders writes. */
  public long primary() {
    return primary;
  }

  /** True while a member is missing (dead and not yet substituted/repaired). */
  public boolean degraded() {
    return degraded;
  }

  @Override
  public String toString() {
    return "NamespaceInfo{" + name + ", replicas=" + replicas + ", minReplicas=" + minReplicas
        + ", ttl=" + ttl + ", nodes=" + NodeIds.hex(replicaNodes) + ", primary=" + NodeIds.hex(primary)
        + (degraded ? ", degraded" : "") + "}";
  }
}
