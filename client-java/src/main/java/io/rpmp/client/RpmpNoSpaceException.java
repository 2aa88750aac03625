// The server's pool is full or too many requests are in flight (status RESOURCE_EXHAUSTED).
// Thrown by RpmpClient (built by the native Status table in jni_util.cc); callers catch it.
package io.rpmp.client;

/** The server's pool is full or too many requests are in flight (status RESOURCE_EXHAUSTED). */
public class RpmpNoSpaceException extends RpmpException {
  public RpmpNoSpaceException(int code, String message) {
    super(code, message);
  }

  public RpmpNoSpaceException(String message) {
    super(RpmpException.RESOURCE_EXHAUSTED, message);
  }
}
