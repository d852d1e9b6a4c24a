#include "core/self_executable.h"

#include <unistd.h>

#include <filesystem>

namespace archbuild {

std::string self_executable_from(const std::string& link_text, long pid) {
  static const std::string deleted = " (deleted)";
  if (link_text.size() > deleted.size() &&
      link_text.compare(link_text.size() - deleted.size(), deleted.size(), deleted) == 0)
    return "/proc/" + std::to_string(pid) + "/exe";
  return link_text;
}

std::string self_executable() {
  return self_executable_from(std::filesystem::read_symlink("/proc/self/exe").string(), static_cast<long>(getpid()));
}

}  // namespace archbuild
