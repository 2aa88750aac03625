// The call did not finish within RpmpClientOptions.timeout (status DEADLINE_EXCEEDED).
// Thrown by RpmpClient (built by the native Status table in jni_util.cc); callers catch it.
package io.rpmp.client;

/** The call did not finish within RpmpClientOptions.timeout (status DEADLINE_EXCEEDED). */
public class RpmpTimeoutException extends RpmpException {
  public RpmpTimeoutException(int code, String message) {
    super(code, message);
  }

  public RpmpTimeoutException(String message) {
    super(RpmpException.DEADLINE_EXCEEDED, message);
  }
}
