// Minimal leveled logging to stderr for daemons and tools. Thread-safe (one write(2)
// per line). Level from RPMP_LOG=debug|info|warn|error (default info).
#pragma once

#include <cstdarg>

namespace rpmp {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
bool LogEnabled(LogLevel level);
// Prefix put on each line, e.g. "rpmp-server"; set once at start.
void SetLogTag(const char* tag);

}  // namespace rpmp

#define RPMP_LOG_DEBUG(...) \
  do { if (::rpmp::LogEnabled(::rpmp::LogLevel::kDebug)) ::rpmp::Log(::rpmp::LogLevel::kDebug, __VA_ARGS__); } while (0)
#define RPMP_LOG_INFO(...) ::rpmp::Log(::rpmp::LogLevel::kInfo, __VA_ARGS__)
#define RPMP_LOG_WARN(...) ::rpmp::Log(::rpmp::LogLevel::kWarn, __VA_ARGS__)
#define RPMP_LOG_ERROR(...) ::rpmp::Log(::rpmp::LogLevel::kError, __VA_ARGS__)
