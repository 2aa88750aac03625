// Connection::Open: client and server on one provider. Two providers do not speak to
// each other (RxM's connection handshake is not the native TCP provider's), so a
// HELLO over the wrong one gets no answer. When the first HELLO gets none, the client
// asks over the other providers this host offers; the one the server answers on names
// itself in its HELLO reply. With provider "auto" the client then uses it; with a
// named provider it fails, naming both. Slow path only.
#include <algorithm>

#include "link/connection.h"
#include "common/log.h"

namespace rpmp {
namespace {

// The longest a probe over another provider waits for the server's HELLO reply.
constexpr std::chrono::milliseconds kProbeTimeout{2000};

// A HELLO that got no answer (not a refusal, not nothing listening).
bool MayBeOtherProvider(const Status& st) {
  if (st.code() != StatusCode::kDeadlineExceeded && st.code() != StatusCode::kUnavailable)
    return false;
  return st.message().find("connection refused") == std::string::npos;
}

}  // namespace

StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& server,
                                                       const LinkOptions& options) {
  StatusOr<std::unique_ptr<Connection>> first = OpenOn(server, options);
  if (first.ok() || !MayBeOtherProvider(first.status())) return first;
  StatusOr<std::string> tried = ResolveProvider(options.provider, "");
  if (!tried.ok()) return first;
  for (const ProviderTraits* t : AutoCandidates()) {
    if (*tried == t->name) continue;
    LinkOptions probe = options;
    probe.provider = t->name;
    probe.timeout = std::min(options.timeout, kProbeTimeout);
    StatusOr<std::unique_ptr<Connection>> c = OpenOn(server, probe);
    if (!c.ok()) continue;
    std::string serves = (*c)->server_provider().empty() ? t->name : (*c)->server_provider();
    if (options.provider != kAutoProvider) {
      return Status::FailedPrecondition(
          "rpmp-server at " + server + " serves provider '" + serves +
          "', this client is configured for '" + options.provider +
          "': give both the same provider (or auto on both)");
    }
    RPMP_LOG_INFO("rpmp-server at %s serves provider %s (no answer over %s): using it",
                  server.c_str(), serves.c_str(), tried->c_str());
    c->reset();  // reopen with the caller's own timeout
    probe.timeout = options.timeout;
    return OpenOn(server, probe);
  }
  return first;
}

}  // namespace rpmp
