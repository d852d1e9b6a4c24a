#include "builder/network_hint.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace archbuild {

namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::vector<std::string> force_build_switches(std::string_view setup_py) {
  std::vector<std::string> found;
  auto add = [&](std::string name) {
    if (std::find(found.begin(), found.end(), name) == found.end()) found.push_back(std::move(name));
  };
  constexpr std::string_view suffix = "_FORCE_BUILD";
  for (size_t at = setup_py.find(suffix); at != std::string_view::npos; at = setup_py.find(suffix, at + 1)) {
    size_t start = at;
    while (start > 0 && identifier_char(setup_py[start - 1])) --start;
    size_t end = at + suffix.size();
    if (start == at || (end < setup_py.size() && identifier_char(setup_py[end]))) continue;
    add(std::string(setup_py.substr(start, end - start)));
  }
  for (size_t at = setup_py.find("FORCE_CUDA"); at != std::string_view::npos; at = setup_py.find("FORCE_CUDA", at + 1))
    if ((at == 0 || !identifier_char(setup_py[at - 1])) &&
        (at + 10 >= setup_py.size() || !identifier_char(setup_py[at + 10])))
      add("FORCE_CUDA");
  return found;
}

std::string network_failure_hint(std::string_view log_text, std::string_view setup_py) {
  static const std::vector<std::string_view> signs = {"Temporary failure in name resolution",
                                                      "Name or service not known",
                                                      "nodename nor servname",
                                                      "Network is unreachable",
                                                      "getaddrinfo failed",
                                                      "Could not resolve host",
                                                      "Failed to establish a new connection",
                                                      "urlopen error",
                                                      "[Errno -3]",
                                                      "[Errno 101]",
                                                      "No matching distribution found",
                                                      "127.0.0.1', port=9",
                                                      "Connection refused"};
  std::string_view sign;
  for (auto candidate : signs)
    if (log_text.find(candidate) != std::string_view::npos) {
      sign = candidate;
      break;
    }
  if (sign.empty()) return {};
  std::string hint = "the build tried to reach the network (its log says \"" + std::string(sign) +
                     "\"), and archbuild builds offline by design: a wheel it labels must be compiled here, not "
                     "downloaded. The project probably fetches a prebuilt binary or a dependency";
  auto switches = force_build_switches(setup_py);
  if (!switches.empty()) {
    std::vector<std::string> settings;
    for (const auto& name : switches) settings.push_back("--env " + name + (name == "FORCE_CUDA" ? "=1" : "=TRUE"));
    hint += "; its setup.py reads " + join(switches, ", ") + ": build with " + join(settings, " ") +
            " (or set it in the recipe's [build.env])";
  } else {
    hint += "; look for a FORCE_BUILD-style switch in its setup.py, vendor the dependency, or pass --allow-network";
  }
  return hint;
}

}  // namespace archbuild
