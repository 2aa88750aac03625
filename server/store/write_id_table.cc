// WriteIdTable implementation (see write_id_table.h).
#include "server/store/write_id_table.h"

#include <algorithm>
#include <vector>

namespace rpmp {

WriteOutcome WriteIdTable::Find(const WriteId& id) const {
  auto w = writers_.find(id.writer);
  if (w == writers_.end()) return WriteOutcome();
  auto s = w->second.seqs.find(id.seq);
  return s == w->second.seqs.end() ? WriteOutcome() : s->second;
}

bool WriteIdTable::TooOld(const WriteId& id) const {
  auto w = writers_.find(id.writer);
  if (w == writers_.end()) return false;
  const auto& seqs = w->second.seqs;
  return seqs.size() >= max_seqs_ && id.seq < seqs.begin()->first && !seqs.count(id.seq);
}

WriteIdTable::Writer& WriteIdTable::Touch(uint64_t writer) {
  Writer& w = writers_[writer];
  w.last_use = ++clock_;
  return w;
}

void WriteIdTable::Insert(const WriteId& id, WriteOutcome outcome) {
  Writer& w = Touch(id.writer);
  w.seqs[id.seq] = std::move(outcome);
  while (w.seqs.size() > max_seqs_) w.seqs.erase(w.seqs.begin());
  if (writers_.size() > max_writers_) EvictWriters();
}

void WriteIdTable::StartInFlight(const WriteId& id, WriteIdKind kind, const std::string& key) {
  WriteOutcome o;
  o.state = WriteState::kInFlight;
  o.kind = kind;
  o.key = key;
  Insert(id, std::move(o));
}

void WriteIdTable::Committed(const WriteId& id, const WriteOutcome& outcome) {
  WriteOutcome o = outcome;
  o.state = WriteState::kCommitted;
  Insert(id, std::move(o));
}

void WriteIdTable::Forget(const WriteId& id) {
  auto w = writers_.find(id.writer);
  if (w == writers_.end()) return;
  auto s = w->second.seqs.find(id.seq);
  if (s != w->second.seqs.end() && s->second.state == WriteState::kInFlight) w->second.seqs.erase(s);
  if (w->second.seqs.empty()) writers_.erase(w);
}

void WriteIdTable::ForgetCommitted(const WriteId& id, uint64_t commit_seq) {
  auto w = writers_.find(id.writer);
  if (w == writers_.end()) return;
  auto s = w->second.seqs.find(id.seq);
  if (s != w->second.seqs.end() && s->second.state == WriteState::kCommitted && s->second.commit_seq == commit_seq)
    w->second.seqs.erase(s);
  if (w->second.seqs.empty()) writers_.erase(w);
}

// Drops the least recently used eighth (at least one) of the writers beyond the bound.
void WriteIdTable::EvictWriters() {
  size_t drop = std::max<size_t>(writers_.size() - max_writers_, max_writers_ / 8);
  drop = std::min(drop, writers_.size());
  std::vector<std::pair<uint64_t, uint64_t>> by_use;  // (last_use, writer)
  by_use.reserve(writers_.size());
  for (const auto& [writer, w] : writers_) by_use.emplace_back(w.last_use, writer);
  std::nth_element(by_use.begin(), by_use.begin() + (drop - 1), by_use.end());
  for (size_t i = 0; i < drop; i++) writers_.erase(by_use[i].second);
}

size_t WriteIdTable::entries() const {
  size_t n = 0;
  for (const auto& [writer, w] : writers_) n += w.seqs.size();
  return n;
}

}  // namespace rpmp
