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
  // Where getMeta listed it (UTF-8 namespace and key, place in the record list), so a
  // read after compaction moved the record can fetch the metadata again. Null for a
  // hand-made ref; the arrays are shared by the refs of one getMeta and never changed.
  private final byte[] ns;
  private final byte[] key;
  private final int index;

  public RecordRef(long tag, long length, int crc, int pool, long rmaAddr, long rmaKey) {
    this(tag, length, crc, pool, rmaAddr, rmaKey, 0);
  }

  /** nodeId: in cluster mode the replica that listed the record (0 = the one server). */
  public RecordRef(
      long tag, long length, int crc, int pool, long rmaAddr, long rmaKey, long nodeId) {
    this(tag, length, crc, pool, rmaAddr, rmaKey, nodeId, null, null, 0);
  }

  /** As built by getMeta: also the object it was listed from and its index there. */
  RecordRef(
      long tag,
      long length,
      int crc,
      int pool,
      long rmaAddr,
      long rmaKey,
      long nodeId,
      byte[] ns,
      byte[] key,
      int index) {
    this.ns = ns;
    this.key = key;
    this.index = index;
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

  byte[] originNamespace() {
    return ns;
  }

  byte[] originKey() {
    return key;
  }

  int index() {
    return index;
  }

  @Override
  public String toString() {
    return "RecordRef{tag=" + tag + ", length=" + length + ", node=" + NodeIds.hex(nodeId) + "}";
  }
}
