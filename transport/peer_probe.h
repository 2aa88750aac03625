// PeerRefusesConnections: a quick check whether anything still listens at host:port
// over TCP. Used by clients on providers whose endpoints are TCP listeners (see
// ProviderTraits::tcp_listener) to tell a dead server at once instead of by timeout.
// Thread-safe; blocks at most `wait`.
#pragma once

#include <chrono>
#include <string>

namespace rpmp {

// True only when the connection attempt was actively refused (nothing listens);
// false when it succeeded, or could not be decided within `wait`.
bool PeerRefusesConnections(const std::string& host, const std::string& port,
                            std::chrono::milliseconds wait);

}  // namespace rpmp
