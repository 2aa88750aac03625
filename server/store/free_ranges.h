// FreeRanges: the first-fit free-space map with coalescing that the DRAM medium and the
// crash-simulating test medium allocate from (offset -> length). Not thread-safe: the
// owning medium holds its own mutex around every call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace rpmp {

class FreeRanges {
 public:
  // Takes `length` bytes from the lowest free range that holds them; its offset, or
  // nothing when no range is large enough.
  std::optional<uint64_t> Take(uint64_t length);
  // Returns [start, start + length) to the map, merging it with its neighbours.
  void Give(uint64_t start, uint64_t length);

 private:
  std::map<uint64_t, uint64_t> ranges_;  // offset -> length, never adjacent
};

}  // namespace rpmp
