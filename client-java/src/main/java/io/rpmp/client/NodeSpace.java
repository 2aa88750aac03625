// What RpmpClient.liveNodeSpace returns, one per LIVE node: its space as its last heartbeat
// reported it to the proxy leader (NodeSpace in rpmp/cluster.h). Immutable.
package io.rpmp.client;

/** Capacity and free bytes of one live node (all its pools; approximate). */
public final class NodeSpace {
  private final long nodeId;
  private final long capacity;
  private final long free;

  public NodeSpace(long nodeId, long capacity, long free) {
    this.nodeId = nodeId;
    this.capacity = capacity;
    this.free = free;
  }

  public long nodeId() {
    return nodeId;
  }

  public long capacity() {
    return capacity;
  }

  public long free() {
    return free;
  }

  @Override
  public String toString() {
    return String.format("node %016x: %d of %d bytes free", nodeId, free, capacity);
  }
}
