#include "toolchain/toolkit_facts.h"

#include <algorithm>

#include <toml++/toml.h>

#include "config/toml_file.h"
#include "core/data_dir.h"
#include "core/error.h"

namespace archbuild {

namespace {

[[noreturn]] void bad_entry(const std::filesystem::path& file, const toml::source_region& where, std::string_view key,
                            std::string_view why) {
  fail_toml_key(file, where, key, why);
}

std::string required_string(const toml::table& table, const std::filesystem::path& file, std::string_view key) {
  auto node = table.get(key);
  if (!node) bad_entry(file, table.source(), key, "missing");
  auto value = node->value<std::string>();
  if (!value) bad_entry(file, node->source(), key, "must be a string");
  return *value;
}

std::vector<ComputeCapability> cc_array(const toml::table& table, const std::filesystem::path& file,
                                        std::string_view key, bool required) {
  std::vector<ComputeCapability> out;
  auto node = table.get(key);
  if (!node) {
    if (required) bad_entry(file, table.source(), key, "missing");
    return out;
  }
  auto array = node->as_array();
  if (!array) bad_entry(file, node->source(), key, "must be an array of \"M.N\" strings");
  for (const auto& element : *array) {
    auto text = element.value<std::string>();
    auto cc = text ? ComputeCapability::parse_dotted(*text) : std::nullopt;
    if (!cc) bad_entry(file, element.source(), key, "each element must be a \"M.N\" string");
    out.push_back(*cc);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> optional_string(const toml::table& table, const std::filesystem::path& file,
                                           std::string_view key) {
  auto node = table.get(key);
  if (!node) return std::nullopt;
  auto value = node->value<std::string>();
  if (!value) bad_entry(file, node->source(), key, "must be a string");
  return *value;
}

std::optional<int> optional_int(const toml::table& table, const std::filesystem::path& file, std::string_view key) {
  auto node = table.get(key);
  if (!node) return std::nullopt;
  auto value = node->value<int64_t>();
  if (!value) bad_entry(file, node->source(), key, "must be an integer");
  return static_cast<int>(*value);
}

// renamed = [{ from = "10.1", to = "11.0", gpu = "Jetson Thor" }]
std::vector<CudaTargets::Rename> renames(const toml::table& table, const std::filesystem::path& file) {
  std::vector<CudaTargets::Rename> out;
  auto node = table.get("renamed");
  if (!node) return out;
  auto array = node->as_array();
  if (!array) bad_entry(file, node->source(), "renamed", "must be an array of { from, to, gpu } tables");
  for (const auto& element : *array) {
    auto entry = element.as_table();
    auto cc = [&](std::string_view key) {
      auto text = entry ? (*entry)[key].value<std::string>() : std::nullopt;
      auto parsed = text ? ComputeCapability::parse_dotted(*text) : std::nullopt;
      if (!parsed) bad_entry(file, element.source(), "renamed", std::string(key) + " must be a \"M.N\" string");
      return *parsed;
    };
    CudaTargets::Rename rename{cc("from"), cc("to"), (*entry)["gpu"].value_or(std::string())};
    if (rename.gpu.empty()) bad_entry(file, element.source(), "renamed", "gpu must name the GPU");
    if (entry->size() != 3) bad_entry(file, element.source(), "renamed", "takes from, to and gpu only");
    for (const auto& earlier : out)
      if (earlier.from == rename.from)
        bad_entry(file, element.source(), "renamed", rename.from.dotted() + " is renamed twice");
    out.push_back(rename);
  }
  return out;
}

ToolkitFacts parse_facts(const std::filesystem::path& file) {
  toml::table table;
  try {
    table = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    fail_bad_input(file.string() + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  ToolkitFacts facts;
  facts.source = file;
  auto version_text = required_string(table, file, "cuda");
  auto version = CudaVersion::parse(version_text);
  if (!version) bad_entry(file, table.get("cuda")->source(), "cuda", "not a version like \"13.0\"");
  facts.version = *version;
  facts.min_driver = required_string(table, file, "min_driver");
  facts.targets = cc_array(table, file, "targets", true);
  facts.arch_specific = cc_array(table, file, "arch_specific", false);
  facts.family_specific = cc_array(table, file, "family_specific", false);
  facts.torch_official_arch_list = optional_string(table, file, "torch_official_arch_list");
  facts.torch_official_arch_list_aarch64 = optional_string(table, file, "torch_official_arch_list_aarch64");
  facts.renamed = renames(table, file);
  facts.max_gcc_major = optional_int(table, file, "max_gcc");
  facts.max_clang_major = optional_int(table, file, "max_clang");
  return facts;
}

}  // namespace

ToolkitTable ToolkitTable::load(const std::filesystem::path& dir) {
  ToolkitTable table;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    fail_environment("toolkit tables not found: " + dir.string() + " is not a directory");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".toml") table.facts_.push_back(parse_facts(entry.path()));
  }
  std::sort(table.facts_.begin(), table.facts_.end(),
            [](const auto& a, const auto& b) { return a.version < b.version; });
  return table;
}

ToolkitTable ToolkitTable::load_default() { return load(data_dir() / "toolchains"); }

const ToolkitFacts* ToolkitTable::find(CudaVersion version) const {
  for (const auto& facts : facts_)
    if (facts.version == version) return &facts;
  return nullptr;
}

const ToolkitFacts* ToolkitTable::newest_at_or_below(CudaVersion version) const {
  const ToolkitFacts* best = nullptr;
  for (const auto& facts : facts_)
    if (facts.version <= version) best = &facts;
  return best;
}

bool ToolkitTable::knows(ComputeCapability cc, ArchVariant variant) const {
  return std::any_of(facts_.begin(), facts_.end(), [&](const ToolkitFacts& f) { return f.can_target(cc, variant); });
}

std::vector<CudaTargets> ToolkitTable::release_targets() const {
  return std::vector<CudaTargets>(facts_.begin(), facts_.end());
}

namespace {
// "535.104.05" -> {535, 104, 5}; empty for anything else.
std::vector<long> driver_numbers(const std::string& text) {
  std::vector<long> numbers;
  if (text.empty() || text.size() > 32) return {};
  size_t start = 0;
  while (start <= text.size()) {
    size_t dot = text.find('.', start);
    auto part = text.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) return {};
    numbers.push_back(std::stol(part));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return numbers.size() <= 4 ? numbers : std::vector<long>{};
}
}  // namespace

std::optional<CudaVersion> ToolkitTable::newest_for_driver(const std::string& driver_version) const {
  auto driver = driver_numbers(driver_version);
  if (driver.empty()) return std::nullopt;
  std::optional<CudaVersion> newest;
  for (const auto& facts : facts_) {
    auto needed = driver_numbers(facts.min_driver);
    if (!needed.empty() && !(driver < needed)) newest = facts.version;
  }
  return newest;
}

}  // namespace archbuild
