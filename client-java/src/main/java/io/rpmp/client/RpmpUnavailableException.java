// The server cannot be reached or went away (status UNAVAILABLE); another server may help.
// Thrown by RpmpClient (built by the native Status table in jni_util.cc); callers catch it.
package io.rpmp.client;

/** The server cannot be reached or went away (status UNAVAILABLE); another server may help. */
public class RpmpUnavailableException extends RpmpException {
  public RpmpUnavailableException(int code, String message) {
    super(code, message);
  }

  public RpmpUnavailableException(String message) {
    super(RpmpException.UNAVAILABLE, message);
  }
}
