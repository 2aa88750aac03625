// libFuzzer target: feeds arbitrary bytes to the wire decoders. They must never
// crash, hang, or read out of bounds (run under ASan), and whatever they accept must
// re-encode. Built with -DRPMP_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* p = reinterpret_cast<const char*>(data);
  rpmp::wire::Request req;
  if (rpmp::wire::DecodeRequest(p, size, &req).ok()) {
    std::string out(rpmp::wire::kMaxFrame, '\0');
    size_t n = rpmp::wire::EncodeRequest(req, out.data(), out.size());
    if (n != size) __builtin_trap();  // accepted frames are canonical
  }
  rpmp::wire::Response resp;
  (void)rpmp::wire::DecodeResponse(p, size, &resp);
  return 0;
}
