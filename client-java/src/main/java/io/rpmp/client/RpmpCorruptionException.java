// A checksum did not match: the data is corrupt or was deleted/reused (status DATA_LOSS).
// Thrown by RpmpClient (built by the native Status table in jni_util.cc); callers catch it.
package io.rpmp.client;

/** A checksum did not match: the data is corrupt or was deleted/reused (status DATA_LOSS). */
public class RpmpCorruptionException extends RpmpException {
  public RpmpCorruptionException(int code, String message) {
    super(code, message);
  }

  public RpmpCorruptionException(String message) {
    super(RpmpException.DATA_LOSS, message);
  }
}
