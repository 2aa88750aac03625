// Implementation of the configuration parsing helpers.
#include "common/config_util.h"

#include <cctype>
#include <cstdio>

namespace rpmp {

StatusOr<uint64_t> ParseSize(const std::string& s) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    uint64_t next = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (next / 10 != v) return Status::InvalidArgument("size '" + s + "' is too large");
    v = next;
    i++;
  }
  if (i == 0) return Status::InvalidArgument("size '" + s + "' must start with a number");
  std::string unit;
  for (; i < s.size(); i++) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  if (unit.size() > 1 && (unit.substr(1) == "b" || unit.substr(1) == "ib")) unit = unit.substr(0, 1);
  int shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k") shift = 10;
  else if (unit == "m") shift = 20;
  else if (unit == "g") shift = 30;
  else if (unit == "t") shift = 40;
  else return Status::InvalidArgument("size '" + s + "' has an unknown unit (use k, m, g or t)");
  if (shift > 0 && (v >> (64 - shift)) != 0) return Status::InvalidArgument("size '" + s + "' is too large");
  return v << shift;
}

StatusOr<std::chrono::milliseconds> ParseDuration(const std::string& s) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + (s[i++] - '0');
  if (i == 0 || i > 12) return Status::InvalidArgument("duration '" + s + "' must start with a number");
  std::string unit = s.substr(i);
  uint64_t ms;
  if (unit == "ms") ms = v;
  else if (unit.empty() || unit == "s") ms = v * 1000;
  else if (unit == "m") ms = v * 60000;
  else if (unit == "h") ms = v * 3600000;
  else return Status::InvalidArgument("duration '" + s + "' has an unknown unit (use ms, s, m or h)");
  return std::chrono::milliseconds(ms);
}

StatusOr<HostPort> ParseHostPort(const std::string& s) {
  HostPort hp;
  size_t colon;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return Status::InvalidArgument("address '" + s + "' is not [IPv6]:PORT");
    hp.host = s.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return Status::InvalidArgument("address '" + s + "' is not HOST:PORT");
    hp.host = s.substr(0, colon);
  }
  hp.port = s.substr(colon + 1);
  if (hp.port.empty() || hp.port.size() > 5) return Status::InvalidArgument("address '" + s + "' has no valid port");
  for (char c : hp.port)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return Status::InvalidArgument("address '" + s + "' has a non-numeric port");
  int port = std::stoi(hp.port);
  if (port < 1 || port > 65535) return Status::InvalidArgument("port in '" + s + "' is out of range 1-65535");
  return hp;
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

std::string NodeIdHex(uint64_t id) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::string HumanBytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) { v /= 1024; u++; }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(n));
  else std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

StatusOr<HostPort> ParseListenAddress(const std::string& s) {
  size_t colon = s.rfind(':');
  if (colon != std::string::npos && s.substr(colon + 1) == "0") {
    RPMP_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(s.substr(0, colon) + ":1"));
    hp.port = "0";
    return hp;
  }
  return ParseHostPort(s);
}

}  // namespace rpmp
