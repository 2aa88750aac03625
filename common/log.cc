// Implementation of the stderr logger declared in log.h.
#include "common/log.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace rpmp {
namespace {

const char* g_tag = "rpmp";

LogLevel LevelFromEnv() {
  const char* v = std::getenv("RPMP_LOG");
  if (v == nullptr) return LogLevel::kInfo;
  if (std::strcmp(v, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(v, "warn") == 0) return LogLevel::kWarn;
  if (std::strcmp(v, "error") == 0) return LogLevel::kError;
  return LogLevel::kInfo;
}

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kError: return "ERROR";
  }
  return "?";
}

}  // namespace

void SetLogTag(const char* tag) { g_tag = tag; }

bool LogEnabled(LogLevel level) {
  static const LogLevel min = LevelFromEnv();
  return level >= min;
}

void Log(LogLevel level, const char* fmt, ...) {
  if (!LogEnabled(level)) return;
  char line[2048];
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t;
  gmtime_r(&ts.tv_sec, &t);
  int n = std::snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %s %s: ", t.tm_hour, t.tm_min,
                        t.tm_sec, ts.tv_nsec / 1000000, g_tag, LevelName(level));
  va_list ap;
  va_start(ap, fmt);
  int m = std::vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
  va_end(ap);
  size_t len = n + (m < 0 ? 0 : (m < static_cast<int>(sizeof(line)) - n - 1 ? m : sizeof(line) - n - 2));
  line[len++] = '\n';
  ssize_t ignored = ::write(2, line, len);
  (void)ignored;
}

}  // namespace rpmp
