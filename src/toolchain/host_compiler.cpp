#include "toolchain/host_compiler.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

std::optional<int> parse_host_config_limit(const std::string& header_text, const std::string& kind) {
  std::smatch match;
  if (kind == "gcc") {
    static const std::regex gcc(R"(#if\s+__GNUC__\s*>\s*(\d+))");
    if (std::regex_search(header_text, match, gcc)) return std::stoi(match[1]);
  } else {
    static const std::regex clang(R"(#if\s+\(__clang_major__\s*>=\s*(\d+)\))");
    if (std::regex_search(header_text, match, clang)) return std::stoi(match[1]) - 1;
  }
  return std::nullopt;
}

HostCompiler detect_host_compiler(const Toolchain& toolchain) {
  HostCompiler compiler;
  if (const char* env = std::getenv("CUDAHOSTCXX"); env && *env) {
    auto found = find_on_path(env);
    if (!found) fail_environment(std::string("CUDAHOSTCXX=") + env + " is not an executable");
    compiler.path = *found;
    compiler.how_chosen = "CUDAHOSTCXX";
  } else if (auto gxx = find_on_path("g++")) {
    compiler.path = *gxx;
    compiler.how_chosen = "g++ on PATH";
  } else if (auto cxx = find_on_path("c++")) {
    compiler.path = *cxx;
    compiler.how_chosen = "c++ on PATH";
  } else {
    fail_environment("no host C++ compiler: set CUDAHOSTCXX or put g++ on PATH");
  }

  auto banner = run_process({compiler.path.string(), "--version"});
  compiler.kind = banner.out.find("clang") != std::string::npos ? "clang" : "gcc";
  auto version = run_process(compiler.kind == "gcc"
                                 ? std::vector<std::string>{compiler.path.string(), "-dumpfullversion", "-dumpversion"}
                                 : std::vector<std::string>{compiler.path.string(), "-dumpversion"});
  compiler.version = trim(version.out);
  compiler.major = std::atoi(compiler.version.c_str());

  if (toolchain.installed) {
    auto header = toolchain.installed->root / "include" / "crt" / "host_config.h";
    std::ifstream file(header);
    if (file) {
      std::stringstream text;
      text << file.rdbuf();
      compiler.max_major = parse_host_config_limit(text.str(), compiler.kind);
      if (compiler.max_major) compiler.limit_source = header.string();
    }
  }
  if (!compiler.max_major) {
    compiler.max_major = compiler.kind == "gcc" ? toolchain.facts.max_gcc_major : toolchain.facts.max_clang_major;
    if (compiler.max_major) compiler.limit_source = toolchain.facts.source.string();
  }
  return compiler;
}

}  // namespace archbuild
