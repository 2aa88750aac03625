// FreeRanges implementation (see free_ranges.h).
#include "server/store/free_ranges.h"

#include <iterator>

namespace rpmp {

std::optional<uint64_t> FreeRanges::Take(uint64_t length) {
  for (auto it = ranges_.begin(); it != ranges_.end(); ++it) {
    if (it->second < length) continue;
    uint64_t offset = it->first;
    uint64_t rest = it->second - length;
    ranges_.erase(it);
    if (rest > 0) ranges_[offset + length] = rest;
    return offset;
  }
  return std::nullopt;
}

void FreeRanges::Give(uint64_t start, uint64_t length) {
  auto next = ranges_.lower_bound(start);
  if (next != ranges_.end() && next->first == start + length) {
    length += next->second;
    next = ranges_.erase(next);
  }
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += length;
      return;
    }
  }
  ranges_[start] = length;
}

}  // namespace rpmp
