// One entry of RpmpClient.list: a key with its size and record count. Built by native code.
package io.rpmp.client;

import java.nio.charset.StandardCharsets;

/** A key of a namespace, with its total length and number of records. */
public final class KeyInfo {
  private final String key;
  private final long totalLength;
  private final int records;

  public KeyInfo(byte[] keyUtf8, long totalLength, int records) {
    this.key = new String(keyUtf8, StandardCharsets.UTF_8);
    this.totalLength = totalLength;
    this.records = records;
  }

  public String key() {
    return key;
  }

  public long totalLength() {
    return totalLength;
  }

  public int records() {
    return records;
  }
}
