#include "core/system_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace archbuild {

uint64_t free_disk_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  auto probe = std::filesystem::absolute(path, ec);
  while (!probe.empty() && !std::filesystem::exists(probe, ec)) {
    if (probe == probe.parent_path()) break;
    probe = probe.parent_path();
  }
  auto info = std::filesystem::space(probe, ec);
  return ec ? 0 : info.available;
}

std::optional<uint64_t> available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  return name;
}

unsigned cpu_count() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::string host_machine() {
  utsname names{};
  if (::uname(&names) != 0) return "unknown";
  return names.machine;
}

bool is_known_machine(std::string_view machine) {
  for (const char* known : kKnownMachines)
    if (machine == known) return true;
  return false;
}

}  // namespace archbuild
