// WriteKind: which write a call is, named the same in every layer (the store, librpmp,
// the JNI binding and Java's io.rpmp.client.WriteKind, which carries these codes) so no
// layer passes a bare bool whose meaning flips between put and append.
// Plain data; any thread. Public (installed with librpmp); common/write_id.h exports it.
#pragma once

#include <cstdint>

namespace rpmp {

// A put replaces an object with one record; an append adds one record to it.
enum class WriteKind : uint8_t { kPut = 1, kAppend = 2 };

}  // namespace rpmp
