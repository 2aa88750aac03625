// Base of every failure reported by the RPMP Java client; carries the librpmp status
// code (numbered like gRPC's). Built in native code (jni_util.cc) or by RpmpClient.
package io.rpmp.client;

import java.io.IOException;

/** A failed RPMP call, with the gRPC-numbered status code librpmp reported. */
public class RpmpException extends IOException {
  public static final int CANCELLED = 1;
  public static final int UNKNOWN = 2;
  public static final int INVALID_ARGUMENT = 3;
  public static final int DEADLINE_EXCEEDED = 4;
  public static final int NOT_FOUND = 5;
  public static final int ALREADY_EXISTS = 6;
  public static final int PERMISSION_DENIED = 7;
  public static final int RESOURCE_EXHAUSTED = 8;
  public static final int FAILED_PRECONDITION = 9;
  public static final int ABORTED = 10;
  public static final int OUT_OF_RANGE = 11;
  public static final int UNIMPLEMENTED = 12;
  public static final int INTERNAL = 13;
  public static final int UNAVAILABLE = 14;
  public static final int DATA_LOSS = 15;

  private final int code;

  public RpmpException(int code, String message) {
    super(message);
    this.code = code;
  }

  /** The status code (see the constants of this class). */
  public int code() {
    return code;
  }
}
