#include "builder/plan_facts.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/data_dir.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/regular_file.h"
#include "core/self_executable.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "process/run_process.h"

namespace archbuild {

namespace {

std::filesystem::path configure_stamp(const std::filesystem::path& source_dir) {
  return source_dir / ".git" / "archbuild-configured.json";
}

bool has_cmake_build_dir(const std::filesystem::path& source_dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(source_dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 3 || it->path().filename() == ".git") it.disable_recursion_pending();
    if (it->path().filename() == "CMakeCache.txt") return true;
  }
  return false;
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

size_t count_cuda_files(const std::filesystem::path& dir) {
  size_t count = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    auto name = it->path().filename().string();
    if (it->is_directory(ec) && (name == ".git" || name == "build" || name == "dist")) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() == ".cu") ++count;
  }
  return count;
}

bool says_use_ninja_false(std::string_view text) {
  constexpr std::string_view kKey = "use_ninja";
  auto space_ends = [&](size_t at) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    return at;
  };
  for (size_t key = text.find(kKey); key != std::string_view::npos; key = text.find(kKey, key + 1)) {
    size_t at = space_ends(key + kKey.size());
    if (at < text.size() && text[at] == '=' && text.substr(space_ends(at + 1), 5) == "False") return true;
  }
  return false;
}

bool compiles_one_file_at_a_time(const std::filesystem::path& dir) {
  // setup.py is the project's: it may be huge, a FIFO or a link to /dev/zero.
  std::string text;
  return read_regular_file(dir / "setup.py", kMaxSetupPyBytes, text).empty() && says_use_ninja_false(text);
}

std::vector<std::filesystem::path> setuptools_build_outputs(const std::filesystem::path& source_dir) {
  std::vector<std::filesystem::path> outputs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir / "build", ec)) {
    const auto name = entry.path().filename().string();
    if (entry.is_directory(ec) && (name.starts_with("lib.") || name.starts_with("temp.") || name.starts_with("bdist.")))
      outputs.push_back(entry.path());
  }
  std::sort(outputs.begin(), outputs.end());
  return outputs;
}

std::optional<std::map<std::string, std::string>> recorded_configure_inputs(const std::filesystem::path& source_dir) {
  std::ifstream in(configure_stamp(source_dir));
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in).get<std::map<std::string, std::string>>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void record_configure_inputs(const std::filesystem::path& source_dir, const std::map<std::string, std::string>& inputs,
                             bool settled) {
  std::error_code ec;
  if (!std::filesystem::is_directory(source_dir / ".git", ec)) return;
  auto recorded = inputs;
  // Not settled yet: a build killed before its configure ran leaves the
  // previous inputs in CMake's cache, so the next build must not resume.
  if (!settled) recorded[kConfigurePendingKey] = "1";
  write_file_atomically(configure_stamp(source_dir), json_text(nlohmann::json(recorded)) + "\n");
}

PlanFacts gather_plan_facts(const std::filesystem::path& source_dir, const std::string& python) {
  PlanFacts facts;
  facts.path = environment("PATH");
  facts.pythonpath = environment("PYTHONPATH");
  facts.cxx = environment("CXX");
  facts.ldflags = environment("LDFLAGS");
  facts.self_executable = self_executable();
  facts.data_dir = data_dir();
  auto tag = run_process({python, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"});
  if (!tag.succeeded()) fail_environment("python " + python + " cannot report its version: " + tag.describe_status());
  facts.python_tag = trim(tag.out);
  facts.cores = cpu_count();
  facts.available_memory_bytes = available_memory_bytes().value_or(0);
  facts.cuda_files = count_cuda_files(source_dir);
  facts.one_file_at_a_time = compiles_one_file_at_a_time(source_dir);
  facts.recorded_configure_inputs = recorded_configure_inputs(source_dir);
  facts.has_cmake_build_dir = has_cmake_build_dir(source_dir);
  facts.setuptools_outputs = setuptools_build_outputs(source_dir);
  return facts;
}

}  // namespace archbuild
