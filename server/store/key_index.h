// KeyIndex: one namespace's keys in DRAM, for LogStore only. Point lookups (get, put,
// append, delete, compaction, recovery) go through a hash table; listing pages through
// the keys in order (List's start_after cursor), so the keys are also kept sorted. The
// hash table points into the sorted map's nodes, which never move: one key's bytes are
// stored once. A get of a 4 KiB object spent about 6% of the server's CPU in the sorted
// map's lookup alone (each of its ~16 levels compares long keys held on the heap:
// docs/benchmarks.md "The key index"). Not thread-safe: the owning Namespace's mutex
// guards it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace rpmp {

template <typename Entry>
class KeyIndex {
 public:
  using Sorted = std::map<std::string, Entry>;
  using const_iterator = typename Sorted::const_iterator;

  KeyIndex() = default;
  KeyIndex(const KeyIndex&) = delete;  // the hash table points into this map's nodes
  KeyIndex& operator=(const KeyIndex&) = delete;

  // The entry of `key`, or null.
  Entry* Find(std::string_view key) {
    auto h = by_hash_.find(key);
    return h == by_hash_.end() ? nullptr : &h->second->second;
  }

  // The entry of `key`, made empty when there is none.
  Entry& operator[](const std::string& key) {
    if (Entry* e = Find(key)) return *e;
    auto it = sorted_.emplace(key, Entry()).first;
    try {
      by_hash_.emplace(std::string_view(it->first), it);
    } catch (...) {
      sorted_.erase(it);  // both or neither
      throw;
    }
    return it->second;
  }

  // Removes `key`; false when it is not there.
  bool Erase(std::string_view key) {
    auto h = by_hash_.find(key);
    if (h == by_hash_.end()) return false;
    auto it = h->second;
    by_hash_.erase(h);  // first: its key is a view of the node erased next
    sorted_.erase(it);
    return true;
  }

  // The first key after `start_after` in byte order, for listing; End() when none.
  const_iterator UpperBound(const std::string& start_after) const { return sorted_.upper_bound(start_after); }
  const_iterator End() const { return sorted_.end(); }

  size_t size() const { return sorted_.size(); }
  bool empty() const { return sorted_.empty(); }
  void clear() {
    by_hash_.clear();
    sorted_.clear();
  }

 private:
  Sorted sorted_;
  std::unordered_map<std::string_view, typename Sorted::iterator> by_hash_;
};

}  // namespace rpmp
