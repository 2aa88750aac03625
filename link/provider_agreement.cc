// Connection::Open: client and server on one provider. Two providers do not speak to
// each other (RxM's connection handshake is not the native TCP provider's), so a
// HELLO over the wrong one gets no answer. When the first HELLO gets none, the client
// asks over the other providers this host offers; the one the server answers on names
// itself in its HELLO reply. With provider "auto" (the default) the client then uses it,
// and its first HELLO waits at most kProbeTimeout before asking the others; with a
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
  const bool automatic = options.provider == kAutoProvider;
  // With auto the first HELLO is a probe too: a server on another provider (e.g. one
  // started with --provider net) never answers it, and waiting the whole call timeout
  // (30 s by default) for that would make every auto client of it slow to start.
  LinkOptions first_try = options;
  if (automatic) first_try.first_hello_timeout = std::min(options.timeout, kProbeTimeout);
  StatusOr<std::unique_ptr<Connection>> first = OpenOn(server, first_try);
  if (first.ok() || !MayBeOtherProvider(first.status())) return first;
  StatusOr<std::string> tried = ResolveProvider(options.provider, "");
  if (!tried.ok()) return first;
  for (const ProviderTraits* t : AutoCandidates()) {
    if (*tried == t->name) continue;
    LinkOptions probe = options;
    probe.provider = t->name;
    probe.first_hello_timeout = std::min(options.timeout, kProbeTimeout);
    StatusOr<std::unique_ptr<Connection>> c = OpenOn(server, probe);
    if (!c.ok()) continue;
    std::string serves = (*c)->server_provider().empty() ? t->name : (*c)->server_provider();
    if (!automatic) {
      return Status::FailedPrecondition(
          "rpmp-server at " + server + " serves provider '" + serves +
          "', this client is configured for '" + options.provider +
          "': give both the same provider (or auto on both)");
    }
    RPMP_LOG_INFO("rpmp-server at %s serves provider %s (no answer over %s): using it",
                  server.c_str(), serves.c_str(), tried->c_str());
    return c;  // later calls and HELLOs have the caller's own timeout
  }
  if (!automatic || first_try.first_hello_timeout >= options.timeout) return first;
  // No other provider answered either: the server may only be slow. Its own provider
  // again, with the whole timeout.
  return OpenOn(server, options);
}

}  // namespace rpmp
