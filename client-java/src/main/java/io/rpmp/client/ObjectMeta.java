// What RpmpClient.getMeta returns: an object's total length and its records in append
// order. Built by native code; immutable.
package io.rpmp.client;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/** The records of one (namespace, key), in append order. */
public final class ObjectMeta {
  private final long totalLength;
  private final List<RecordRef> records;

  public ObjectMeta(long totalLength, RecordRef[] records) {
    this.totalLength = totalLength;
    this.records = Collections.unmodifiableList(Arrays.asList(records));
  }

  public long totalLength() {
    return totalLength;
  }

  public List<RecordRef> records() {
    return records;
  }
}
