#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "toolchain/toolchain.h"

namespace archbuild {

// The C++ compiler nvcc will call for host code, and whether that nvcc accepts it.
struct HostCompiler {
  std::filesystem::path path;
  std::string how_chosen;  // "CUDAHOSTCXX", "g++ on PATH"
  std::string kind;        // "gcc" or "clang"
  std::string version;     // "12.2.0"
  int major = 0;
  std::optional<int> max_major;  // newest major this nvcc accepts
  std::string limit_source;      // ".../crt/host_config.h" or the table file

  bool accepted() const { return !max_major || major <= *max_major; }
};

// CUDAHOSTCXX if set, else g++ (then c++) on PATH. Throws UserError(environment)
// when there is no host compiler.
HostCompiler detect_host_compiler(const Toolchain& toolchain);

// The newest accepted major from host_config.h's "#if __GNUC__ > N" (gcc)
// or "__clang_major__ >= N" (clang, meaning N-1).
std::optional<int> parse_host_config_limit(const std::string& header_text, const std::string& kind);

}  // namespace archbuild
