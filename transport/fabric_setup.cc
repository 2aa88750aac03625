// Fabric set-up: provider selection, resource creation, memory registration, peers.
// Slow path only; see fabric_datapath.cc for posting and polling.
#include <netdb.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <unistd.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "transport/fabric.h"
#include "transport/peer_address.h"

namespace rpmp {
std::string FabricError(const char* call, int ret) {
  return std::string(call) + ": " + fi_strerror(ret < 0 ? -ret : ret) + " (" +
         std::to_string(ret) + ")";
}

uint64_t Fabric::RandomKey() const {
  uint64_t key = 0;
  size_t bytes = info_->domain_attr->mr_key_size;
  if (bytes == 0 || bytes > sizeof(key)) bytes = sizeof(key);
  while (key == 0) {
    if (getrandom(&key, sizeof(key), 0) != static_cast<ssize_t>(sizeof(key))) std::abort();
    if (bytes < sizeof(key)) key &= (uint64_t{1} << (8 * bytes)) - 1;
  }
  return key;
}

MemoryRegion::~MemoryRegion() {
  if (owner_ != nullptr) owner_->ForgetRegion(this);  // its copies first
  if (mr_ != nullptr) fi_close(&mr_->fid);
}

StatusOr<std::unique_ptr<Fabric>> Fabric::Open(const FabricOptions& options) {
  RPMP_ASSIGN_OR_RETURN(std::string name, ResolveProvider(options.provider, options.node));
  const ProviderTraits* traits = FindProvider(name);
  std::unique_ptr<Fabric> f(new Fabric());
  f->traits_ = traits;
  RPMP_RETURN_IF_ERROR(f->OpenResources(options));
  return f;
}

Status Fabric::OpenResources(const FabricOptions& o) {
  // libfabric's psm provider loads libinfinipath, which installs SIGSEGV/SIGBUS
  // handlers unless told not to; they hide real crashes (and break JVMs).
  setenv("IPATH_NO_BACKTRACE", "1", 0);
  fi_info* hints = ProviderHints(*traits_);
  const char* node = o.node.empty() ? nullptr : o.node.c_str();
  const char* service = o.service.empty() ? nullptr : o.service.c_str();
  uint64_t flags = (node != nullptr || service != nullptr) ? FI_SOURCE : 0;
  // Ask for source addresses on receives (sessions are bound to them); providers
  // without the capability still work, unbound (docs/security.md).
  hints->caps |= FI_SOURCE;
  int ret = fi_getinfo(FI_VERSION(1, 9), node, service, flags, hints, &info_);
  if (ret != 0) {
    hints->caps &= ~static_cast<uint64_t>(FI_SOURCE);
    ret = fi_getinfo(FI_VERSION(1, 9), node, service, flags, hints, &info_);
  }
  fi_freeinfo(hints);
  if (ret != 0) {
    return Status::Unavailable(FabricError("fi_getinfo", ret) + " for provider '" +
                               traits_->name + "' at " + (node ? node : "*") + ":" +
                               (service ? service : "*") +
                               " (is the address local and the provider installed?)");
  }
  if (!IsProvider(info_, *traits_)) {  // e.g. "tcp" on libfabric 1.17 is layered under RxM
    std::string got = info_->fabric_attr->prov_name;
    return Status::Unavailable("provider '" + std::string(traits_->name) +
                               "' is not offered natively by this libfabric (it offers '" + got +
                               "'; libfabric 1.17 calls the native TCP provider 'net')");
  }
  mr_mode_ = static_cast<uint64_t>(info_->domain_attr->mr_mode);
  source_ = (info_->caps & FI_SOURCE) != 0;
  if ((ret = fi_fabric(info_->fabric_attr, &fabric_, nullptr)) != 0)
    return Status::Unavailable(FabricError("fi_fabric", ret));
  if ((ret = fi_domain(fabric_, info_, &domain_, nullptr)) != 0)
    return Status::Unavailable(FabricError("fi_domain", ret));
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  if ((ret = fi_av_open(domain_, &av_attr, &av_, nullptr)) != 0)
    return Status::Unavailable(FabricError("fi_av_open", ret));
  RPMP_RETURN_IF_ERROR(OpenEndpoint());
  std::string own = LocalAddress();
  if (own.size() >= sizeof(sa_family_t))
    local_family_ = reinterpret_cast<const sockaddr*>(own.data())->sa_family;
  RPMP_LOG_DEBUG("fabric %s open at %s, mr_mode=0x%lx", traits_->name,
                 LocalAddressString().c_str(), static_cast<unsigned long>(mr_mode_));
  return Status::Ok();
}

StatusOr<std::unique_ptr<Fabric>> Fabric::OpenSibling(uint16_t port) {
  if (parent_ != nullptr) return Status::InvalidArgument("a sibling of a sibling endpoint");
  if (mr_mode_ & FI_MR_ENDPOINT)
    return Status::Unimplemented(std::string("provider ") + traits_->name +
                                 " binds memory registrations to one endpoint");
  if (info_->src_addr != nullptr && info_->addr_format != FI_SOCKADDR_IN &&
      info_->addr_format != FI_SOCKADDR_IN6)
    return Status::Unimplemented("sibling endpoints need socket addresses");
  std::unique_ptr<Fabric> f(new Fabric());
  f->traits_ = traits_;
  f->parent_ = this;
  f->info_ = fi_dupinfo(info_);
  if (f->info_ == nullptr) return Status::Internal("fi_dupinfo failed");
  if (f->info_->src_addr != nullptr) {  // the parent's host (as bound), the sibling's port
    std::string own = LocalAddress();
    if (own.size() > f->info_->src_addrlen) return Status::Internal("endpoint address too long");
    std::memcpy(f->info_->src_addr, own.data(), own.size());
    if (info_->addr_format == FI_SOCKADDR_IN)
      static_cast<sockaddr_in*>(f->info_->src_addr)->sin_port = htons(port);
    else
      static_cast<sockaddr_in6*>(f->info_->src_addr)->sin6_port = htons(port);
  }
  f->mr_mode_ = mr_mode_;
  f->source_ = source_;
  f->local_family_ = local_family_;
  f->fabric_ = fabric_;
  f->own_domain_ = SiblingsOwnDomains();
  if (f->own_domain_) {
    int ret;
    if ((ret = fi_domain(fabric_, f->info_, &f->domain_, nullptr)) != 0)
      return Status::Unavailable(FabricError("fi_domain (sibling)", ret));
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((ret = fi_av_open(f->domain_, &av_attr, &f->av_, nullptr)) != 0)
      return Status::Unavailable(FabricError("fi_av_open (sibling)", ret));
  } else {
    f->domain_ = domain_;
    f->av_ = av_;
  }
  RPMP_RETURN_IF_ERROR(f->OpenEndpoint());
  if (f->own_domain_) RPMP_RETURN_IF_ERROR(CopyRegionsTo(f.get()));  // adds it to siblings_
  else {
    std::lock_guard<std::mutex> lock(siblings_mu_);
    siblings_.push_back(f.get());
  }
  return f;
}

bool Fabric::SiblingsOwnDomains() const {
  // Only where one key can be valid in every domain and no local descriptor is ever
  // needed (providers.h, sibling_own_domain).
  return traits_->sibling_own_domain &&
         (mr_mode_ & (FI_MR_PROV_KEY | FI_MR_LOCAL | FI_MR_ENDPOINT)) == 0;
}

Status Fabric::CopyRegionsTo(Fabric* sibling) {
  std::lock_guard<std::mutex> lock(siblings_mu_);
  size_t done = 0;
  int ret = 0;
  for (; done < remote_regions_.size(); done++) {
    MemoryRegion* r = remote_regions_[done];
    fid_mr* mr = nullptr;
    if ((ret = sibling->RegisterIn(r->base_, r->len_, r->access_, r->key_, &mr)) != 0) break;
    r->copies_.push_back({sibling, mr});
  }
  if (done < remote_regions_.size()) {  // undo: the sibling is closed by the caller
    for (size_t i = 0; i < done; i++) {
      auto& c = remote_regions_[i]->copies_;
      fi_close(&c.back().mr->fid);
      c.pop_back();
    }
    return Status::Unavailable(FabricError("fi_mr_reg (sibling domain)", ret));
  }
  siblings_.push_back(sibling);
  return Status::Ok();
}

void Fabric::ForgetRegion(MemoryRegion* r) {
  std::lock_guard<std::mutex> lock(siblings_mu_);
  for (const MemoryRegion::Copy& c : r->copies_) fi_close(&c.mr->fid);
  r->copies_.clear();
  remote_regions_.erase(std::remove(remote_regions_.begin(), remote_regions_.end(), r),
                        remote_regions_.end());
  r->owner_ = nullptr;
}

Fabric::~Fabric() {
  if (parent_ != nullptr) {
    std::lock_guard<std::mutex> lock(parent_->siblings_mu_);
    auto& v = parent_->siblings_;
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
    // The parent's regions registered in this sibling's domain: closed before the domain.
    for (MemoryRegion* r : parent_->remote_regions_) {
      auto& c = r->copies_;
      for (auto it = c.begin(); it != c.end();) {
        if (it->domain_of != this) {
          ++it;
          continue;
        }
        fi_close(&it->mr->fid);
        it = c.erase(it);
      }
    }
  }
  if (event_fd_ >= 0) close(event_fd_);
  if (ep_ != nullptr) fi_close(&ep_->fid);
  if (cq_ != nullptr) fi_close(&cq_->fid);
  if (wait_set_ != nullptr) fi_close(&wait_set_->fid);  // after the CQ bound to it
  if (parent_ != nullptr && !own_domain_) {  // the domain and the AV are the parent's
    if (info_ != nullptr) fi_freeinfo(info_);
    return;
  }
  if (parent_ == nullptr) {  // regions that outlive this Fabric no longer reach it
    std::lock_guard<std::mutex> lock(siblings_mu_);
    for (MemoryRegion* r : remote_regions_) {
      for (const MemoryRegion::Copy& c : r->copies_) fi_close(&c.mr->fid);
      r->copies_.clear();
      r->owner_ = nullptr;
    }
    remote_regions_.clear();
  }
  if (parent_ != nullptr) {  // an own domain and AV; the fabric is the parent's
    if (av_ != nullptr) fi_close(&av_->fid);
    if (domain_ != nullptr) fi_close(&domain_->fid);
    if (info_ != nullptr) fi_freeinfo(info_);
    return;
  }
  if (av_ != nullptr) fi_close(&av_->fid);
  if (domain_ != nullptr) fi_close(&domain_->fid);
  if (fabric_ != nullptr) fi_close(&fabric_->fid);
  if (info_ != nullptr) fi_freeinfo(info_);
}

StatusOr<std::unique_ptr<MemoryRegion>> Fabric::Register(void* base, size_t len, MrAccess mode) {
  uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE;
  if (mode != MrAccess::kLocalOnly) access |= FI_REMOTE_READ;
  if (mode == MrAccess::kRemoteReadWrite) access |= FI_REMOTE_WRITE;
  std::unique_ptr<MemoryRegion> r(new MemoryRegion());
  r->base_ = static_cast<char*>(base);
  r->len_ = len;
  r->access_ = access;
  r->virt_addr_ = (mr_mode_ & FI_MR_VIRT_ADDR) != 0;
  // Regions peers may access are registered in the own domains of this Fabric's siblings
  // too (now and as siblings open), under the same key; under the lock, so that a
  // sibling opening meanwhile either copies this region or is copied to here.
  const bool shared = mode != MrAccess::kLocalOnly && parent_ == nullptr && SiblingsOwnDomains();
  std::unique_lock<std::mutex> lock(siblings_mu_, std::defer_lock);
  if (shared) lock.lock();
  // Where the provider takes the key RPMP asks for (tcp, tcp;ofi_rxm), ask for a
  // random one of the provider's key size: a peer cannot guess another region's key
  // (docs/security.md). With FI_MR_PROV_KEY (verbs) the provider picks it.
  int ret = -FI_ENOKEY;
  for (int attempt = 0; attempt < 8 && ret == -FI_ENOKEY; attempt++) {
    uint64_t requested_key = (mr_mode_ & FI_MR_PROV_KEY) ? 0 : RandomKey();
    ret = RegisterIn(base, len, access, requested_key, &r->mr_);
    if (ret != 0 || !shared) continue;
    for (Fabric* f : siblings_) {
      if (!f->own_domain_) continue;
      fid_mr* mr = nullptr;
      if ((ret = f->RegisterIn(base, len, access, requested_key, &mr)) != 0) break;
      r->copies_.push_back({f, mr});
    }
    if (ret == 0) break;
    for (const MemoryRegion::Copy& c : r->copies_) fi_close(&c.mr->fid);  // another key
    r->copies_.clear();
    fi_close(&r->mr_->fid);
    r->mr_ = nullptr;
  }
  if (ret != 0) return Status::Unavailable(FabricError("fi_mr_reg", ret));
  r->key_ = fi_mr_key(r->mr_);
  r->desc_ = fi_mr_desc(r->mr_);
  if (shared) {
    r->owner_ = this;
    remote_regions_.push_back(r.get());
  }
  return r;
}

int Fabric::RegisterIn(void* base, size_t len, uint64_t access, uint64_t key, fid_mr** mr) {
  int ret = fi_mr_reg(domain_, base, len, access, 0, key, 0, mr, nullptr);
  if (ret != 0) return ret;
  if (mr_mode_ & FI_MR_ENDPOINT) {
    if ((ret = fi_mr_bind(*mr, &ep_->fid, 0)) != 0 || (ret = fi_mr_enable(*mr)) != 0) {
      fi_close(&(*mr)->fid);
      *mr = nullptr;
      return ret;
    }
  }
  return 0;
}

std::string Fabric::LocalAddress() const {
  char buf[256];
  size_t len = sizeof(buf);
  if (fi_getname(&ep_->fid, buf, &len) != 0) return {};
  return std::string(buf, len);
}

std::string Fabric::LocalAddressString() const {
  std::string a = LocalAddress();
  char buf[256];
  size_t len = sizeof(buf);
  fi_av_straddr(av_, a.data(), buf, &len);
  return std::string(buf);
}

StatusOr<std::string> Fabric::CanonicalPeer(std::string_view address) const {
  return CanonicalPeerAddress(info_->addr_format, local_family_, address);
}

StatusOr<PeerAddr> Fabric::InsertPeer(std::string_view address) {
  // Never hand libfabric bytes it cannot take: a bad family breaks its whole AV.
  RPMP_ASSIGN_OR_RETURN(std::string canonical, CanonicalPeer(address));
  fi_addr_t addr = FI_ADDR_NOTAVAIL;
  int n = fi_av_insert(av_, canonical.data(), 1, &addr, 0, nullptr);
  if (n != 1) return Status::InvalidArgument("peer address rejected by the fabric");
  return addr;
}

StatusOr<PeerAddr> Fabric::InsertPeer(const std::string& host, const std::string& port) {
  fi_info* hints = ProviderHints(*traits_);
  fi_info* dest = nullptr;
  int ret = fi_getinfo(FI_VERSION(1, 9), host.c_str(), port.c_str(), 0, hints, &dest);
  fi_freeinfo(hints);
  if (ret != 0 || dest == nullptr || dest->dest_addr == nullptr) {
    if (dest) fi_freeinfo(dest);
    return Status::Unavailable(FabricError("fi_getinfo", ret) + " resolving " + host + ":" + port);
  }
  std::string_view bytes(static_cast<const char*>(dest->dest_addr), dest->dest_addrlen);
  StatusOr<PeerAddr> peer = InsertPeer(bytes);
  fi_freeinfo(dest);
  return peer;
}

Status Fabric::OpenEndpoint() {
  int ret;
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.wait_obj = static_cast<fi_wait_obj>(traits_->cq_wait_obj);
  cq_attr.size = 4096;
  if (traits_->own_wait_set && traits_->cq_wait_obj == FI_WAIT_FD) {
    // A wait set of our own, so Wait() can clear its signal (providers.h, own_wait_set).
    fi_wait_attr wait_attr{};
    wait_attr.wait_obj = FI_WAIT_FD;
    if ((ret = fi_wait_open(fabric_, &wait_attr, &wait_set_)) != 0)
      return Status::Unavailable(FabricError("fi_wait_open", ret));
    cq_attr.wait_obj = FI_WAIT_SET;
    cq_attr.wait_set = wait_set_;
  }
  if ((ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr)) != 0)
    return Status::Unavailable(FabricError("fi_cq_open", ret));
  if ((ret = fi_endpoint(domain_, info_, &ep_, nullptr)) != 0) {
    return Status::Unavailable(FabricError("fi_endpoint", ret) + " (port in use?)");
  }
  if ((ret = fi_ep_bind(ep_, &av_->fid, 0)) != 0 ||
      (ret = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)) != 0)
    return Status::Unavailable(FabricError("fi_ep_bind", ret));
  if ((ret = fi_enable(ep_)) != 0)
    return Status::Unavailable(FabricError("fi_enable", ret) + " (port in use?)");
  if (traits_->cq_wait_obj == FI_WAIT_FD &&
      fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) {
    wait_fd_ = -1;  // the provider cannot block: Wait() polls instead
  }
  if (wait_fd_ >= 0) event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  return Status::Ok();
}

void Fabric::RemovePeer(PeerAddr peer) {
  FailDeferred(peer);
  {
    std::lock_guard<std::mutex> lock(siblings_mu_);
    for (Fabric* f : siblings_)
      if (!f->own_domain_) f->FailDeferred(peer);  // the others' PeerAddrs are their own
  }
  fi_av_remove(av_, &peer, 1, 0);
}

void Fabric::FailDeferred(PeerAddr peer) {
  {
    // Operations still queued for the peer (the provider said FI_EAGAIN) would later be
    // posted to a removed entry (libfabric crashes) or to whoever gets the entry next:
    // they fail now instead, reported by Poll like any failed operation.
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = deferred_.begin(); it != deferred_.end();) {
      if (it->peer != peer) {
        ++it;
        continue;
      }
      Completion c;
      c.ctx = it->ctx;
      c.status = Status::Unavailable("peer removed before the operation could be posted");
      failed_.push_back(c);
      it = deferred_.erase(it);
    }
    deferred_per_peer_.erase(peer);
  }
}

}  // namespace rpmp
