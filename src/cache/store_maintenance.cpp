#include "cache/store_maintenance.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cache/simple_index.h"
#include "core/error.h"
#include "core/sha256.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

std::vector<std::string> verify_store_entry(const StoreEntry& entry) {
  std::vector<std::string> problems;
  std::ifstream key_file(entry.dir / "key.txt");
  std::stringstream key_text;
  key_text << key_file.rdbuf();
  if (sha256_hex(key_text.str()) != entry.hash)
    problems.push_back("key.txt does not hash to the entry's name (edited?)");
  if (!entry.manifest) {
    problems.push_back("manifest.json is missing or not JSON");
    return problems;
  }
  if (entry.wheels.empty()) problems.push_back("no wheel in wheels/");
  std::map<std::string, std::string> recorded;
  for (const auto& wheel : entry.manifest->wheels) recorded[wheel.file] = wheel.sha256;
  for (const auto& wheel : entry.wheels) {
    auto name = wheel.filename().string();
    auto it = recorded.find(name);
    if (it == recorded.end()) {
      problems.push_back(name + ": not listed in manifest.json");
    } else if (sha256_file_hex(wheel) != it->second) {
      problems.push_back(name + ": sha256 differs from the manifest's (changed after publishing)");
    }
    try {
      for (const auto& error : verify_record(wheel).errors) problems.push_back(name + ": " + error);
    } catch (const UserError& e) {
      problems.push_back(name + ": " + e.what());
    }
  }
  for (const auto& [name, hash] : recorded)
    if (!std::filesystem::exists(entry.dir / "wheels" / name))
      problems.push_back(name + ": in manifest.json but missing");
  return problems;
}

namespace {
std::string percent_decode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}
}  // namespace

std::vector<std::string> verify_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store) {
  std::vector<std::string> problems;
  auto index = cache_index_paths(cache_dir);
  std::set<std::string> published, listed;
  for (const auto& entry : store.entries())
    for (const auto& wheel : entry.wheels) published.insert(wheel.filename().string());
  static const std::regex link(R"re(href="([^"#]+)#sha256=([0-9a-f]{64})")re");
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator(index.simple_dir, ec)) {
    if (!dir.is_directory(ec)) continue;
    std::ifstream page(dir.path() / "index.html");
    std::stringstream text;
    text << page.rdbuf();
    auto body = text.str();
    for (std::sregex_iterator it(body.begin(), body.end(), link), end; it != end; ++it) {
      auto target = (dir.path() / percent_decode((*it)[1].str())).lexically_normal();
      listed.insert(target.filename().string());
      if (!std::filesystem::exists(target, ec))
        problems.push_back("simple/" + dir.path().filename().string() +
                           "/index.html links a missing wheel: " + target.string());
      else if (sha256_file_hex(target) != (*it)[2].str())
        problems.push_back("simple/" + dir.path().filename().string() + "/index.html: sha256 of " +
                           target.filename().string() + " differs from the link's");
    }
  }
  for (const auto& name : published)
    if (!listed.count(name))
      problems.push_back(name + ": published but not in the index (run `archbuild cache gc` to rebuild it)");
  return problems;
}

std::string gc_group(const StoreEntry& entry) {
  std::set<std::string> projects;
  for (const auto& wheel : entry.wheels)
    if (auto name = WheelName::parse(wheel.filename().string())) projects.insert(normalize_project_name(name->name));
  std::string group;
  for (const auto& project : projects) group += (group.empty() ? "" : ",") + project;
  return group + " " + entry.value("arch_list");
}

std::vector<StoreEntry> entries_to_collect(const std::vector<StoreEntry>& entries, size_t keep) {
  std::map<std::string, size_t> kept;
  std::vector<StoreEntry> doomed;
  for (const auto& entry : entries)
    if (++kept[gc_group(entry)] > keep) doomed.push_back(entry);
  return doomed;
}

}  // namespace archbuild
