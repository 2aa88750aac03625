// PmemMedium implementation and the pool open/create logic with its error messages.
#include "server/store/pmem_medium.h"

#include <libpmem.h>
#include <libpmemobj.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/no_space.h"
#include "server/store/format.h"

namespace rpmp {
namespace {

struct ConstructArgs {
  const void* header;
  uint64_t header_len;
};

int ConstructObject(PMEMobjpool* pop, void* ptr, void* arg) {
  auto* args = static_cast<ConstructArgs*>(arg);
  std::memcpy(ptr, args->header, args->header_len);
  pmemobj_persist(pop, ptr, args->header_len);
  return 0;
}

std::string PmemError() {
  const char* m = pmemobj_errormsg();
  return (m != nullptr && *m != '\0') ? m : std::strerror(errno);
}

std::string MiB(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Size of a devdax device from sysfs; 0 when unknown.
uint64_t DevdaxSize(const struct stat& st) {
  std::ifstream in("/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" +
                   std::to_string(minor(st.st_rdev)) + "/size");
  uint64_t size = 0;
  in >> size;
  return size;
}

PmemMedium::Kind DetectKind(const std::string& path, void* base, uint64_t size) {
  if (pmem_is_pmem(base, size)) return PmemMedium::Kind::kPmem;
  struct statfs fs;
  if (statfs(path.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
    return PmemMedium::Kind::kTmpfs;
  }
  return PmemMedium::Kind::kFile;
}

StatusOr<PMEMobjpool*> CreatePool(const std::string& path, uint64_t size) {
  if (size < kMinPoolSize) {
    return Status::InvalidArgument("pool size " + std::to_string(size) + " bytes for " +
                                   path + " is below the minimum of " +
                                   MiB(kMinPoolSize) + " (" +
                                   std::to_string(kMinPoolSize) + " bytes)");
  }
  PMEMobjpool* pop = pmemobj_create(path.c_str(), store_format::kLayoutName, size, 0600);
  if (pop == nullptr) {
    return Status::IOError("cannot create pool " + path + " of " + MiB(size) + ": " +
                           PmemError() + " (check that the directory exists and is "
                           "writable and has room)");
  }
  return pop;
}

// Opens an existing file or device; tells a foreign pool from a non-pool.
StatusOr<PMEMobjpool*> OpenExisting(const std::string& path, bool is_device,
                                    bool create_if_missing) {
  if (access(path.c_str(), R_OK | W_OK) != 0) {
    return Status(StatusCode::kPermissionDenied,
                  "pool " + path + " is not readable and writable: " + std::strerror(errno));
  }
  PMEMobjpool* pop = pmemobj_open(path.c_str(), store_format::kLayoutName);
  if (pop != nullptr) return pop;
  const int open_errno = errno;
  std::string first_error = PmemError();
  if (open_errno == EWOULDBLOCK) {
    return Status::Unavailable("pool " + path + " is in use: another process (or another "
                               "store in this one) has it open");
  }
  PMEMobjpool* foreign = pmemobj_open(path.c_str(), nullptr);
  if (foreign != nullptr) {
    pmemobj_close(foreign);
    return Status::FailedPrecondition("pool at " + path +
                                      " has a different layout (not an RPMP pool)");
  }
  if (is_device && create_if_missing) {  // a blank devdax device: make it a pool
    pop = pmemobj_create(path.c_str(), store_format::kLayoutName, 0, 0600);
    if (pop != nullptr) return pop;
  }
  return Status::FailedPrecondition(path + " is not a PMDK pool or is damaged (" +
                                    first_error + "); remove it or give another path");
}

}  // namespace

PmemMedium::PmemMedium(PMEMobjpool* pop, std::string path, uint64_t capacity, Kind kind)
    : pop_(pop), path_(std::move(path)), capacity_(capacity), kind_(kind) {
  switch (kind_) {
    case Kind::kPmem: promise_ = "pmem (flush)"; break;
    case Kind::kTmpfs: promise_ = "tmpfs (survives process crash, not reboot)"; break;
    case Kind::kFile: promise_ = "file (msync)"; break;
  }
  PMEMoid root = pmemobj_root(pop_, store_format::kRootSize);
  root_ = static_cast<char*>(pmemobj_direct(root));
}

PmemMedium::~PmemMedium() { pmemobj_close(pop_); }

StatusOr<uint64_t> PmemMedium::Allocate(uint32_t type, uint64_t size, const void* header,
                                        uint64_t header_len) {
  if (size > PMEMOBJ_MAX_ALLOC_SIZE) {
    return Status::NoSpace("pool " + path_ + " " + kNoSpaceObjectTooBig + " of " +
                           std::to_string(size) + " bytes (PMDK maximum)");
  }
  ConstructArgs args{header, header_len};
  PMEMoid oid;
  if (pmemobj_alloc(pop_, &oid, size, type, ConstructObject, &args) != 0) {
    return Status::NoSpace("pool " + path_ + " cannot allocate " + std::to_string(size) +
                           " bytes: " + PmemError());
  }
  return oid.off;
}

void PmemMedium::Free(uint64_t offset) {
  PMEMoid oid = pmemobj_oid(base() + offset);
  pmemobj_free(&oid);
}

std::vector<uint64_t> PmemMedium::ObjectsOfType(uint32_t type) {
  std::vector<uint64_t> out;
  for (PMEMoid oid = pmemobj_first(pop_); !OID_IS_NULL(oid); oid = pmemobj_next(oid)) {
    if (pmemobj_type_num(oid) == type) out.push_back(oid.off);
  }
  return out;
}

void PmemMedium::Persist(const void* p, uint64_t len) {
  if (kind_ == Kind::kTmpfs) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  } else {
    pmemobj_persist(pop_, p, len);
  }
}

StatusOr<std::unique_ptr<PmemMedium>> OpenPmemMedium(const std::string& path,
                                                     uint64_t size,
                                                     bool create_if_missing,
                                                     bool prefault) {
  struct stat st;
  bool exists = stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) {
    return Status::IOError("cannot access pool path " + path + ": " + std::strerror(errno));
  }
  if (exists && S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("pool path " + path +
                                   " is a directory; give the path of a pool file");
  }
  bool empty_file = exists && S_ISREG(st.st_mode) && st.st_size == 0;
  if ((!exists || empty_file) && !create_if_missing) {
    return Status::NotFound("pool " + path + (exists ? " is an empty file" : " does not exist") +
                            " and create_if_missing is false");
  }
  // Global controls, read by the open/create below: set both ways every time, so an
  // earlier prefaulted open in this process does not carry over.
  int on = prefault ? 1 : 0;
  if ((pmemobj_ctl_set(nullptr, "prefault.at_open", &on) != 0 ||
       pmemobj_ctl_set(nullptr, "prefault.at_create", &on) != 0) && prefault) {
    return Status::FailedPrecondition("this libpmemobj cannot prefault pools (" + PmemError() +
                                      "); run without prefault");
  }
  StatusOr<PMEMobjpool*> pop = Status::Internal("unset");
  if (!exists || empty_file) {
    if (empty_file) unlink(path.c_str());
    pop = CreatePool(path, size);
  } else {
    pop = OpenExisting(path, S_ISCHR(st.st_mode), create_if_missing);
  }
  if (!pop.ok()) return pop.status();
  stat(path.c_str(), &st);
  uint64_t capacity = S_ISCHR(st.st_mode) ? DevdaxSize(st) : static_cast<uint64_t>(st.st_size);
  PmemMedium::Kind kind = DetectKind(path, *pop, capacity);
  return std::make_unique<PmemMedium>(*pop, path, capacity, kind);
}

}  // namespace rpmp
