// Which write a call is: a put replaces an object with one record, an append adds one.
// The same names and codes as C++'s rpmp::WriteKind (common/write_id.h), which the JNI
// binding receives as the code: no layer passes a bare boolean whose meaning could flip.
// Package-private: RpmpClient's put/append methods choose it.
package io.rpmp.client;

enum WriteKind {
  PUT(1),
  APPEND(2);

  /** The value of rpmp::WriteKind in C++. */
  final int code;

  WriteKind(int code) {
    this.code = code;
  }
}
