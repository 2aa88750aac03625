// The request was malformed, e.g. a bad key or size (status INVALID_ARGUMENT).
// Thrown by RpmpClient (built by the native Status table in jni_util.cc); callers catch it.
package io.rpmp.client;

/** The request was malformed, e.g. a bad key or size (status INVALID_ARGUMENT). */
public class RpmpInvalidArgumentException extends RpmpException {
  public RpmpInvalidArgumentException(int code, String message) {
    super(code, message);
  }

  public RpmpInvalidArgumentException(String message) {
    super(RpmpException.INVALID_ARGUMENT, message);
  }
}
