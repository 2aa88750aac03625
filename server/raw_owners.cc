// Raw allocation ownership and pins (see raw_owners.h).
#include "server/raw_owners.h"

#include <string>

namespace rpmp {
namespace {

std::string Where(RawAddress a) {
  return "pool " + std::to_string(a.pool) + " offset " + std::to_string(a.offset);
}

}  // namespace

void RawOwners::Claim(RawAddress a, uint64_t size, uint32_t session, std::string_view tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_[{a.pool, a.offset}] = Entry{size, session, 0, std::string(tenant)};
}

std::map<RawOwners::Key, RawOwners::Entry>::iterator RawOwners::Find(RawAddress a, uint64_t len) {
  auto it = entries_.upper_bound({a.pool, a.offset});
  if (it == entries_.begin()) return entries_.end();
  --it;
  if (it->first.first != a.pool) return entries_.end();
  uint64_t start = it->first.second;
  (void)len;  // the store checks the range's end (ResolveRaw)
  if (a.offset - start >= it->second.size && a.offset != start) return entries_.end();
  return it;
}

Status RawOwners::Owned(const Entry& e, uint32_t session, std::string_view tenant,
                        RawAddress a) const {
  if (e.owner == session) return Status::Ok();
  if (e.owner != 0)
    return Status(StatusCode::kPermissionDenied,
                  "raw allocation at " + Where(a) + " belongs to another session");
  if (!tenant.empty() && tenant != e.tenant)  // an orphan of another credential
    return Status(StatusCode::kPermissionDenied,
                  "raw allocation at " + Where(a) + " was made by another credential than this "
                  "one (prefix \"" + std::string(tenant) + "\")");
  return Status::Ok();
}

namespace {
Status NoOwner(RawAddress a, std::string_view tenant) {
  return Status(StatusCode::kPermissionDenied,
                "raw allocation at " + Where(a) + " has no recorded owner (made before a restart): "
                "only a holder of the cluster secret may touch it, not this credential (prefix \"" +
                    std::string(tenant) + "\")");
}
}  // namespace

Status RawOwners::Pin(RawAddress a, uint64_t len, uint32_t session, std::string_view tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = Find(a, len);
  if (it == entries_.end())  // made before a restart: unowned
    return tenant.empty() ? Status::Ok() : NoOwner(a, tenant);
  Status st = Owned(it->second, session, tenant, a);
  if (!st.ok()) return st;
  it->second.owner = session;  // adopt an orphan
  it->second.pins++;
  return Status::Ok();
}

void RawOwners::Unpin(RawAddress a) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = Find(a, 0);
  if (it != entries_.end() && it->second.pins > 0) it->second.pins--;
}

Status RawOwners::Release(RawAddress a, uint32_t session, std::string_view tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find({a.pool, a.offset});
  if (it == entries_.end()) return tenant.empty() ? Status::Ok() : NoOwner(a, tenant);
  Status st = Owned(it->second, session, tenant, a);
  if (!st.ok()) return st;
  if (it->second.pins > 0)
    return Status(StatusCode::kFailedPrecondition,
                  "raw allocation at " + Where(a) + " has a transfer in flight; free it after");
  entries_.erase(it);
  return Status::Ok();
}

void RawOwners::SessionEnded(uint32_t session) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [k, e] : entries_)
    if (e.owner == session) e.owner = 0;
}

size_t RawOwners::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace rpmp
