// The key, namespace or allocation does not exist (status NOT_FOUND).
// Thrown by RpmpClient (built by the native Status table in jni_util.cc); callers catch it.
package io.rpmp.client;

/** The key, namespace or allocation does not exist (status NOT_FOUND). */
public class RpmpNotFoundException extends RpmpException {
  public RpmpNotFoundException(int code, String message) {
    super(code, message);
  }

  public RpmpNotFoundException(String message) {
    super(RpmpException.NOT_FOUND, message);
  }
}
