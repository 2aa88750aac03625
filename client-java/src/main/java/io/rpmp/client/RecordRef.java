// One record of an object as listed by RpmpClient.getMeta: enough for readRecord to
// fetch it one-sided. Built by native code; immutable.
package io.rpmp.client;

/** A record of an object: its tag (e.g. the writer's attempt id), length and location. */
public final class RecordRef {
  private final long tag;
  private final long length;
  private final int crc;
  private final int pool;
  private final long rmaAddr;
  private final long rmaKey;
  private final long nodeId;

  public RecordRef(long tag, long length, int crc, int pool, long rmaAddr, long rmaKey) {
    this(tag, length, crc, pool, rmaAddr, rmaKey, 0);
  }

  /** nodeId: in cluster mode the replica that listed the record (0 = the one server). */
  public RecordRef(
      long tag, long length, int crc, int pool, long rmaAddr, long rmaKey, long nodeId) {
    this.nodeId = nodeId;
    this.tag = tag;
    this.length = length;
    this.crc = crc;
    this.pool = pool;
    this.rmaAddr = rmaAddr;
    this.rmaKey = rmaKey;
  }

  public long tag() {
    return tag;
  }

  public long length() {
    return length;
  }

  /** CRC-32C of the payload. */
  public int crc() {
    return crc;
  }

  public int pool() {
    return pool;
  }

  public long rmaAddr() {
    return rmaAddr;
  }

  public long rmaKey() {
    return rmaKey;
  }

  /** Cluster mode: node id of the replica that listed (and serves) this record; else 0. */
  public long nodeId() {
    return nodeId;
  }

  @Override
  public String toString() {
    return "RecordRef{tag=" + tag + ", length=" + length + ", node=" + nodeId + "}";
  }
}
