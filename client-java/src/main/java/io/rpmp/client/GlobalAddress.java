// Where raw memory allocated with RpmpClient.alloc lives; stable across server restarts.
// Built by native code or parsed from its string form.
package io.rpmp.client;

/** Address of raw memory on an RPMP server: node, pool and offset. */
public final class GlobalAddress {
  private final long nodeId;
  private final int pool;
  private final long offset;

  public GlobalAddress(long nodeId, int pool, long offset) {
    this.nodeId = nodeId;
    this.pool = pool;
    this.offset = offset;
  }

  public long nodeId() {
    return nodeId;
  }

  public int pool() {
    return pool;
  }

  public long offset() {
    return offset;
  }

  /** A new address {@code delta} bytes further into the same allocation. */
  public GlobalAddress plus(long delta) {
    return new GlobalAddress(nodeId, pool, offset + delta);
  }

  /** Same form as librpmp: "&lt;node hex&gt;:&lt;pool&gt;:&lt;offset hex&gt;". */
  @Override
  public String toString() {
    return Long.toHexString(nodeId) + ":" + Integer.toUnsignedString(pool) + ":"
        + Long.toHexString(offset);
  }

  public static GlobalAddress parse(String s) {
    String[] parts = s.split(":");
    if (parts.length != 3) {
      throw new IllegalArgumentException("not a GlobalAddress: " + s);
    }
    return new GlobalAddress(
        Long.parseUnsignedLong(parts[0], 16),
        Integer.parseUnsignedInt(parts[1]),
        Long.parseUnsignedLong(parts[2], 16));
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof GlobalAddress)) {
      return false;
    }
    GlobalAddress a = (GlobalAddress) o;
    return a.nodeId == nodeId && a.pool == pool && a.offset == offset;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(nodeId * 31 + pool) * 31 + Long.hashCode(offset);
  }
}
