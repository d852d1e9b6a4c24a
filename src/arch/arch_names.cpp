#include "arch/arch_names.h"

#include <algorithm>

#include <toml++/toml.h>

#include "arch/arch_spec.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/strings.h"

namespace archbuild {

namespace {

// "9.0a" for a target, its PTX aside.
std::string accepted_spelling(const ArchTarget& target) {
  return target.cc.dotted() + (target.variant == ArchVariant::arch_specific     ? "a"
                               : target.variant == ArchVariant::family_specific ? "f"
                                                                                : "");
}

std::optional<std::pair<int, int>> major_minor(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::make_pair(major, minor);
}

}  // namespace

bool ArchNames::accepts(const ArchTarget& target) const {
  if (!accepted) return true;
  return std::find(accepted->begin(), accepted->end(), accepted_spelling(target)) != accepted->end();
}

std::optional<std::vector<ArchTarget>> ArchNames::expand(std::string_view item) const {
  std::string body = trim(item);
  bool with_ptx = false;
  if (to_lower(body).ends_with("+ptx")) {
    with_ptx = true;
    body.erase(body.size() - 4);
  }
  for (const auto& [name, value] : named) {
    if (to_lower(body) != to_lower(name)) continue;
    std::vector<ArchTarget> targets;
    for (const auto& part : split_any(value, ";"))
      for (const auto& target : parse_arch_item(part)) targets.push_back(target);
    if (with_ptx) {
      if (ptx_for_every_member)
        for (auto& target : targets) target.ptx = true;
      else if (!targets.empty())
        targets.back().ptx = true;
    }
    return targets;
  }
  return std::nullopt;
}

const ArchNames& pytorch_cmake_arch_names() {
  // select_compute_arch.cmake: a name is its SASS; NAME+PTX adds PTX for each member.
  static const ArchNames names{"PyTorch's CMake",
                               {{"Maxwell", "5.0;5.2"},
                                {"Pascal", "6.0;6.1"},
                                {"Volta", "7.0"},
                                {"Turing", "7.5"},
                                {"Ampere", "8.0;8.6"},
                                {"Ada", "8.9"},
                                {"Hopper", "9.0"},
                                {"Blackwell", "10.0;12.0"}},
                               true,
                               std::nullopt};
  return names;
}

CppExtensionArchTable CppExtensionArchTable::load(const std::filesystem::path& file) {
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& error) {
    fail_bad_input(file.string() + ":" + std::to_string(error.source().begin.line) + ": " +
                   std::string(error.description()));
  }
  auto bad = [&](const std::string& why) { fail_bad_input(file.string() + ": " + why); };
  CppExtensionArchTable table;
  const auto* releases = root["release"].as_array();
  if (!releases || releases->empty()) bad("no [[release]] entries");
  for (const auto& node : *releases) {
    const auto* entry = node.as_table();
    if (!entry) bad("a [[release]] entry is not a table");
    const std::string torch = (*entry)["torch"].value_or(std::string());
    auto version = major_minor(torch);
    if (!version) bad("release '" + torch + "': torch must be MAJOR.MINOR");
    Release release{version->first, version->second, {}};
    release.names.consumer = "torch " + torch + "'s cpp_extension";
    const auto* named = (*entry)["named"].as_array();
    const auto* supported = (*entry)["supported"].as_array();
    if (!named || !supported) bad("release " + torch + " needs named and supported");
    for (const auto& pair : *named) {
      const auto* items = pair.as_array();
      if (!items || items->size() != 2 || !(*items)[0].is_string() || !(*items)[1].is_string())
        bad("release " + torch + ": each named entry is [\"Name\", \"targets\"]");
      release.names.named.emplace_back((*items)[0].value_or(std::string()), (*items)[1].value_or(std::string()));
    }
    std::vector<std::string> accepted;
    for (const auto& arch : *supported) {
      if (!arch.is_string()) bad("release " + torch + ": supported holds strings");
      accepted.push_back(arch.value_or(std::string()));
    }
    release.names.accepted = std::move(accepted);
    table.releases_.push_back(std::move(release));
  }
  std::sort(table.releases_.begin(), table.releases_.end(),
            [](const Release& a, const Release& b) { return std::tie(a.major, a.minor) > std::tie(b.major, b.minor); });
  return table;
}

CppExtensionArchTable CppExtensionArchTable::load_default() {
  return load(data_dir() / "toolchains" / "torch" / "cpp_extension_arches.toml");
}

ArchNames CppExtensionArchTable::for_torch(const std::string& torch_version) const {
  const auto version = major_minor(torch_version);
  ArchNames names = releases_.front().names;
  if (version) {
    for (const auto& release : releases_)
      if (std::tie(release.major, release.minor) <= std::tie(version->first, version->second)) {
        names = release.names;
        break;
      }
    if (std::tie(releases_.back().major, releases_.back().minor) > std::tie(version->first, version->second))
      names = releases_.back().names;  // older than every entry: the oldest known rules
  }
  return names;
}

std::vector<std::string> CppExtensionArchTable::releases() const {
  std::vector<std::string> out;
  for (const auto& release : releases_)
    out.push_back(std::to_string(release.major) + "." + std::to_string(release.minor));
  return out;
}

}  // namespace archbuild
