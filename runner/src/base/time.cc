#include "base/time.h"

#include <ctime>

namespace runx::base {

std::string UtcNow() { return UtcNow("%Y-%m-%dT%H:%M:%SZ"); }

std::string UtcNow(const char* strftime_format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, strftime_format, &tm);
  return buf;
}

}  // namespace runx::base
