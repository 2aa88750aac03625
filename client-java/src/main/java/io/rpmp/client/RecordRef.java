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

  public RecordRef(long tag, long length, int crc, int pool, long rmaAddr, long rmaKey) {
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

  @Override
  public String toString() {
    return "RecordRef{tag=" + tag + ", length=" + length + "}";
  }
}
