#include "doctor/official_builds.h"

#include <algorithm>

#include "arch/arch_spec.h"
#include "config/toml_file.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/system_info.h"

namespace archbuild {

namespace {

[[noreturn]] void bad_entry(const std::filesystem::path& file, const toml::source_region& where, std::string_view key,
                            std::string_view why) {
  fail_toml_key(file, where, key, why);
}

std::string string_key(const toml::table& table, const std::filesystem::path& file, std::string_view key,
                       bool required) {
  auto node = table.get(key);
  if (!node) {
    if (required) bad_entry(file, table.source(), key, "missing");
    return "";
  }
  auto value = node->value<std::string>();
  if (!value) bad_entry(file, node->source(), key, "must be a string");
  return *value;
}

std::vector<ArchTarget> targets_of(const std::string& list, const toml::node& where, const std::filesystem::path& file,
                                   std::string_view key) {
  std::vector<ArchTarget> targets;
  try {
    for (const auto& item : split_any(list, ";"))
      for (auto& target : parse_arch_item(item)) targets.push_back(target);
  } catch (const UserError& e) {
    bad_entry(file, where.source(), key, e.what());
  }
  if (targets.empty()) bad_entry(file, where.source(), key, "names no arch");
  return targets;
}

bool release_text(const std::string& text) {
  if (text.empty() || text.size() > 32) return false;
  for (const auto& part : split_any(text, "."))
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
  return text.front() != '.' && text.back() != '.' && text.find("..") == std::string::npos;
}

}  // namespace

int compare_release(const std::string& a, const std::string& b) {
  auto left = split_any(a, "."), right = split_any(b, ".");
  for (size_t i = 0; i < std::max(left.size(), right.size()); ++i) {
    long x = i < left.size() ? std::stol(left[i]) : 0, y = i < right.size() ? std::stol(right[i]) : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::string OfficialBuild::variant() const { return "cu" + std::to_string(cuda.major) + std::to_string(cuda.minor); }

std::string OfficialBuild::index_url() const { return "https://download.pytorch.org/whl/" + variant(); }

RunVerdict OfficialBuild::verdict_for(ComputeCapability device) const { return best_verdict(targets, device); }

bool driver_runs(RunVerdict verdict, CudaVersion build_cuda, CudaVersion driver_cuda) {
  return verdict == RunVerdict::native ? driver_cuda.major >= build_cuda.major : driver_cuda >= build_cuda;
}

bool OfficialBuild::has_python(const std::string& major_minor) const {
  return std::find(python.begin(), python.end(), major_minor) != python.end();
}

OfficialBuildTable OfficialBuildTable::from(std::vector<OfficialBuild> builds) {
  std::stable_sort(builds.begin(), builds.end(), [](const OfficialBuild& a, const OfficialBuild& b) {
    if (int order = compare_release(a.torch, b.torch)) return order > 0;
    return a.cuda > b.cuda;
  });
  OfficialBuildTable table;
  table.builds_ = std::move(builds);
  return table;
}

namespace {
// A misspelt key (`machnie`) would otherwise read as an x86-64 row.
void known_keys(const toml::table& table, const std::filesystem::path& file,
                std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : table)
    if (std::find(keys.begin(), keys.end(), key.str()) == keys.end())
      bad_entry(file, value.source(), std::string(key.str()), "unknown key");
}
}  // namespace

OfficialBuildTable OfficialBuildTable::load(const std::filesystem::path& file) {
  toml::table root;
  try {
    root = parse_toml_file(file);
  } catch (const toml::parse_error& e) {
    fail_bad_input(file.string() + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  std::vector<OfficialBuild> builds;
  auto releases = root.get_as<toml::array>("release");
  if (!releases) fail_bad_input(file.string() + ": no [[release]] entries");
  for (const auto& node : *releases) {
    const auto* release = node.as_table();
    if (!release) bad_entry(file, node.source(), "release", "must be a table");
    known_keys(*release, file, {"torch", "torchvision", "torchaudio", "python", "source", "variant"});
    OfficialBuild common;
    common.torch = string_key(*release, file, "torch", true);
    if (!release_text(common.torch)) bad_entry(file, release->source(), "torch", "must be a release number: N.N.N");
    common.torchvision = string_key(*release, file, "torchvision", false);
    common.torchaudio = string_key(*release, file, "torchaudio", false);
    common.source = string_key(*release, file, "source", true);
    auto python = release->get_as<toml::array>("python");
    if (!python) bad_entry(file, release->source(), "python", "missing, or not an array");
    for (const auto& element : *python) {
      auto text = element.value<std::string>();
      if (!text || !release_text(*text)) bad_entry(file, element.source(), "python", "each element must be \"3.N\"");
      common.python.push_back(*text);
    }
    auto variants = release->get_as<toml::array>("variant");
    if (!variants || variants->empty()) bad_entry(file, release->source(), "variant", "missing: [[release.variant]]");
    for (const auto& variant_node : *variants) {
      const auto* variant = variant_node.as_table();
      if (!variant) bad_entry(file, variant_node.source(), "variant", "must be a table");
      known_keys(*variant, file, {"cuda", "arch_list", "wheel_targets", "source", "machine"});
      OfficialBuild build = common;
      auto cuda_text = string_key(*variant, file, "cuda", true);
      auto cuda = CudaVersion::parse(cuda_text);
      if (!cuda) bad_entry(file, variant->source(), "cuda", "must be \"M.N\"");
      build.cuda = *cuda;
      if (auto machine = string_key(*variant, file, "machine", false); !machine.empty()) {
        if (!is_known_machine(machine))
          bad_entry(file, variant->get("machine")->source(), "machine", "must be \"x86_64\" or \"aarch64\"");
        build.machine = machine;
      }
      build.arch_list = string_key(*variant, file, "arch_list", true);
      build.targets = targets_of(build.arch_list, *variant->get("arch_list"), file, "arch_list");
      if (auto inspected = string_key(*variant, file, "wheel_targets", false); !inspected.empty()) {
        build.targets = targets_of(inspected, *variant->get("wheel_targets"), file, "wheel_targets");
        build.inspected = true;
      }
      if (auto note = string_key(*variant, file, "source", false); !note.empty()) build.source += "; " + note;
      builds.push_back(std::move(build));
    }
  }
  return from(std::move(builds));
}

OfficialBuildTable OfficialBuildTable::load_default() {
  return load(data_dir() / "toolchains" / "torch" / "official_builds.toml");
}

OfficialBuildTable OfficialBuildTable::for_machine(const std::string& machine) const {
  OfficialBuildTable table;
  for (const auto& build : builds_)
    if (build.machine == machine) table.builds_.push_back(build);
  return table;
}

std::vector<std::string> OfficialBuildTable::releases() const {
  std::vector<std::string> out;
  for (const auto& build : builds_)
    if (std::find(out.begin(), out.end(), build.torch) == out.end()) out.push_back(build.torch);
  return out;
}

}  // namespace archbuild
