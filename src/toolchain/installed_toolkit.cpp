#include "toolchain/installed_toolkit.h"

#include <algorithm>
#include <cstdlib>
#include <regex>

#include "core/error.h"
#include "core/strings.h"
#include "process/run_process.h"

namespace archbuild {

bool parse_nvcc_version(const std::string& text, CudaVersion& version, std::string& release) {
  static const std::regex pattern(R"(release (\d+)\.(\d+), V([0-9.]+))");
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return false;
  version = {std::stoi(match[1]), std::stoi(match[2])};
  release = match[3];
  return true;
}

std::vector<ComputeCapability> parse_gpu_list(const std::string& text) {
  std::vector<ComputeCapability> out;
  for (const auto& word : split_any(text, " \t\r\n")) {
    auto digits = word.substr(word.find('_') + 1);
    if (auto cc = ComputeCapability::parse_digits(digits)) out.push_back(*cc);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<NvccRelease> probe_nvcc_version(const std::filesystem::path& nvcc) {
  const auto result = run_process({nvcc.string(), "--version"}, {.timeout = std::chrono::seconds(60)});
  NvccRelease found;
  if (!result.succeeded() || !parse_nvcc_version(result.out, found.version, found.release)) return std::nullopt;
  return found;
}

InstalledToolkit describe_toolkit(const std::filesystem::path& nvcc) {
  auto run = [&](const std::string& flag) {
    auto result = run_process({nvcc.string(), flag}, {.timeout = std::chrono::seconds(60)});
    if (!result.succeeded())
      fail_environment(nvcc.string() + " " + flag + " failed (" + result.describe_status() + "): " + trim(result.err));
    return result.out;
  };
  InstalledToolkit toolkit;
  toolkit.nvcc = nvcc;
  toolkit.root = nvcc.parent_path().parent_path();
  const auto release = probe_nvcc_version(nvcc);
  if (!release) fail_environment(nvcc.string() + " --version failed or printed no 'release X.Y, VX.Y.Z' line");
  toolkit.version = release->version;
  toolkit.release = release->release;
  toolkit.sass_targets = parse_gpu_list(run("--list-gpu-code"));
  toolkit.ptx_targets = parse_gpu_list(run("--list-gpu-arch"));
  return toolkit;
}

std::vector<InstalledToolkit> find_installed_toolkits() {
  std::vector<std::pair<std::filesystem::path, std::string>> candidates;  // nvcc, how found
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* value = std::getenv(var); value && *value)
      candidates.emplace_back(std::filesystem::path(value) / "bin" / "nvcc", var);
  }
  if (auto on_path = find_on_path("nvcc")) candidates.emplace_back(*on_path, "PATH");
  candidates.emplace_back("/usr/local/cuda/bin/nvcc", "/usr/local/cuda");
  std::error_code ec;
  std::vector<std::filesystem::path> versioned;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/local", ec)) {
    if (entry.path().filename().string().rfind("cuda-", 0) == 0) versioned.push_back(entry.path());
  }
  std::sort(versioned.begin(), versioned.end());
  for (const auto& dir : versioned) candidates.emplace_back(dir / "bin" / "nvcc", dir.string());

  std::vector<InstalledToolkit> found;
  std::vector<std::filesystem::path> seen;
  for (const auto& [nvcc, how] : candidates) {
    auto real = std::filesystem::weakly_canonical(nvcc, ec);
    if (ec || !std::filesystem::is_regular_file(real, ec)) continue;
    if (auto it = std::find(seen.begin(), seen.end(), real); it != seen.end()) {
      found[it - seen.begin()].found_via.push_back(how);
      continue;
    }
    try {
      auto toolkit = describe_toolkit(nvcc);
      toolkit.found_via.push_back(how);
      found.push_back(std::move(toolkit));
      seen.push_back(real);
    } catch (const UserError&) {
      // a broken nvcc is not a toolkit; `detect` lists only working ones
    }
  }
  return found;
}

}  // namespace archbuild
