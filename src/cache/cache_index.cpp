#include "cache/cache_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/cache_layout.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/json_text.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_variant.h"

namespace archbuild {

CacheIndex cache_index_paths(const std::filesystem::path& cache_dir) {
  const CacheLayout layout(cache_dir);
  return {layout.wheels(), layout.simple_index(), {}, {}};
}

void check_cache_index_dirs(const std::filesystem::path& cache_dir) {
  const CacheLayout layout(cache_dir);
  std::error_code ec;
  for (const auto& [path, directory] : {std::pair{layout.wheels(), true}, std::pair{layout.simple_index(), true},
                                        std::pair{layout.index_lock(), false}}) {
    auto status = std::filesystem::symlink_status(path, ec);
    if (!std::filesystem::exists(status)) continue;
    if (std::filesystem::is_symlink(status))
      fail_bad_input(path.string() + " is a symbolic link: archbuild follows no link out of a cache dir it writes");
    if (directory != std::filesystem::is_directory(status))
      fail_bad_input(path.string() + (directory ? " is not a directory" : " is not a lock file archbuild wrote"));
  }
  check_index_dir(layout.simple_index());
}

namespace {

// lstat: a symbolic link in wheels/ is never taken for the link archbuild makes.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  struct stat x {};
  struct stat y {};
  return ::stat(a.c_str(), &x) == 0 && ::lstat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

// link_into_place's temporary: .tmp-PID-NAME.whl
bool is_own_temporary(const std::string& name) {
  if (name.rfind(CacheLayout::kTemporaryPrefix, 0) != 0 || !name.ends_with(".whl")) return false;
  auto digits = name.find_first_not_of("0123456789", CacheLayout::kTemporaryPrefix.size());
  return digits != std::string::npos && digits > CacheLayout::kTemporaryPrefix.size() && name[digits] == '-';
}

// A hard link (same bytes, no copy) renamed over `target`; a copy where the
// filesystem cannot link.
void link_into_place(const std::filesystem::path& source, const std::filesystem::path& target) {
  auto temporary = target.parent_path() / (std::string(CacheLayout::kTemporaryPrefix) + std::to_string(getpid()) + "-" +
                                           target.filename().string());
  std::error_code ec;
  std::filesystem::remove(temporary, ec);
  std::filesystem::create_hard_link(source, temporary, ec);
  if (ec) std::filesystem::copy_file(source, temporary, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(temporary, target);
}

// {name}-{version}-variants.json for the variant wheels among `wheels`
// (each with its variant.json beside it in the store), merged with what
// `existing` (file name -> the document now in wheels/, when kept) lists.
std::map<std::string, std::string> merged_variants_documents(const std::vector<std::filesystem::path>& wheels,
                                                             const std::map<std::string, nlohmann::json>& existing) {
  std::map<std::string, nlohmann::json> merged = existing;
  for (const auto& wheel : wheels) {
    auto name = WheelName::parse(wheel.filename().string());
    if (!name || name->variant.empty()) continue;
    std::string text;
    if (!read_regular_file(wheel.string() + ".json", 1 << 20, text).empty()) continue;
    auto document = nlohmann::json::parse(text, nullptr, false);
    if (!document.is_object() || !document["variants"].is_object()) continue;
    auto& into = merged[variants_index_file_name(wheel.filename().string())];
    if (into.is_null()) into = document;
    for (const auto& [label, properties] : document["variants"].items()) into["variants"][label] = properties;
  }
  std::map<std::string, std::string> documents;
  for (const auto& [file, document] : merged) documents[file] = json_text(document) + "\n";
  return documents;
}

// Writes a variants document unless the file already says exactly that;
// true when it was written.
bool write_variants_document(const std::filesystem::path& target, const std::string& text) {
  std::string now;
  if (read_regular_file(target, 16u << 20, now).empty() && now == text) return false;
  auto temporary = target.parent_path() / (std::string(CacheLayout::kTemporaryPrefix) + std::to_string(getpid()) + "-" +
                                           target.filename().string() + ".whl");  // a temporary gc knows
  write_whole_file(temporary, text);
  std::filesystem::rename(temporary, target);
  return true;
}

}  // namespace

namespace {

// The whole refresh, under the index lock the caller holds.
CacheIndex refresh_locked(const std::filesystem::path& cache_dir, const WheelStore& store) {
  auto index = cache_index_paths(cache_dir);
  const auto linked_before = linked_wheel_names(index.simple_dir);  // the links this code made
  std::filesystem::create_directories(index.wheels_dir);

  // Newest entry wins a file name (entries() is newest first).
  std::map<std::string, std::filesystem::path> chosen;
  for (const auto& entry : store.entries()) {
    for (const auto& wheel : entry.wheels) {
      if (chosen.emplace(wheel.filename().string(), wheel).second) continue;
      index.shadowed.push_back(wheel);
    }
    for (const auto& wheel : entry.variants) chosen.emplace(wheel.filename().string(), wheel);
  }
  std::vector<std::filesystem::path> sources;
  for (const auto& [name, source] : chosen) sources.push_back(source);
  const auto documents = merged_variants_documents(sources, {});
  std::error_code ec;
  std::set<std::string> relinked;  // names whose link will point at other bytes
  for (const auto& [file, text] : documents) {
    std::string now;
    if (std::filesystem::exists(index.wheels_dir / file, ec) &&
        (!read_regular_file(index.wheels_dir / file, 16u << 20, now).empty() || now != text))
      relinked.insert(file);
  }
  for (const auto& [name, source] : chosen) {
    auto target = index.wheels_dir / name;
    auto status = std::filesystem::symlink_status(target, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
        !std::filesystem::is_symlink(status))
      fail_bad_input(target.string() + " is not a wheel link archbuild made");
    if (std::filesystem::exists(status) && !same_file(source, target)) relinked.insert(name);
  }
  // A name taken over by another entry (two keys, one version) changes its
  // bytes under one path: the pages stop linking it first, so a run killed
  // between the link and the pages leaves a wheel not yet listed, never a
  // listed sha256 that the file no longer has.
  if (!relinked.empty())
    write_simple_index(index.wheels_dir, index.simple_dir, [&](const std::string& file) {
      // what the last pages listed stays listed until the final pages (its link is still there)
      return chosen.count(file) || documents.count(file) ? !relinked.count(file) : linked_before.count(file) > 0;
    });
  for (const auto& [name, source] : chosen) {
    auto target = index.wheels_dir / name;
    if (!same_file(source, target)) link_into_place(source, target);  // a rename replaces a link, never follows it
  }
  for (const auto& [file, text] : documents) write_variants_document(index.wheels_dir / file, text);
  index.wheels = write_simple_index(index.wheels_dir, index.simple_dir, [&](const std::string& file) {
    return chosen.count(file) > 0 || documents.count(file) > 0;
  });
  // Only now, with no page naming them, the links of removed entries go: the
  // ones the previous pages linked and killed runs' temporaries, nothing else.
  for (const auto& file : std::filesystem::directory_iterator(index.wheels_dir, ec)) {
    auto name = file.path().filename().string();
    if (chosen.count(name) || documents.count(name) || file.is_symlink(ec) || !file.is_regular_file(ec)) continue;
    if (linked_before.count(name) || is_own_temporary(name)) std::filesystem::remove(file.path(), ec);
  }
  return index;
}

}  // namespace

CacheIndex refresh_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store) {
  check_cache_index_dirs(cache_dir);
  FileLock lock(CacheLayout(cache_dir).index_lock());
  return refresh_locked(cache_dir, store);
}

CacheIndex publish_to_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store,
                                  const StoreEntry& entry) {
  check_cache_index_dirs(cache_dir);
  FileLock lock(CacheLayout(cache_dir).index_lock());
  auto index = cache_index_paths(cache_dir);
  std::error_code ec;
  if (!std::filesystem::exists(index.simple_dir / kIndexMarker, ec)) return refresh_locked(cache_dir, store);
  std::map<std::string, std::string> recorded;  // file name -> sha256, from the manifest
  if (entry.manifest)
    for (const auto& wheel : entry.manifest->wheels) recorded[wheel.file] = wheel.sha256;
  std::map<std::string, std::vector<IndexedWheel>> by_project;
  std::map<std::string, std::set<std::string>> relinked;
  std::filesystem::create_directories(index.wheels_dir);
  for (const auto& wheel : entry.wheels) {
    auto name = WheelName::parse(wheel.filename().string());
    if (!name) fail_bad_input(wheel.string() + ": not a wheel file name (PEP 427)");
    const auto project = normalize_project_name(name->name);
    const auto target = index.wheels_dir / wheel.filename();
    auto status = std::filesystem::symlink_status(target, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
        !std::filesystem::is_symlink(status))
      fail_bad_input(target.string() + " is not a wheel link archbuild made");
    if (std::filesystem::exists(status) && !same_file(wheel, target))
      relinked[project].insert(wheel.filename().string());
    auto digest = recorded.count(wheel.filename().string()) ? recorded[wheel.filename().string()]
                                                            : sha256_file_hex(wheel);
    by_project[project].push_back({project, target, digest});
    index.wheels.push_back(by_project[project].back());
  }
  // The variant wheels, and their version's variants document with this entry's labels merged in.
  for (const auto& wheel : entry.variants) {
    auto name = WheelName::parse(wheel.filename().string());
    if (!name) continue;
    const auto project = normalize_project_name(name->name);
    const auto target = index.wheels_dir / wheel.filename();
    if (std::filesystem::exists(std::filesystem::symlink_status(target, ec)) && !same_file(wheel, target))
      relinked[project].insert(wheel.filename().string());
    by_project[project].push_back({project, target, sha256_file_hex(wheel)});
  }
  std::map<std::string, nlohmann::json> existing;
  for (const auto& wheel : entry.variants) {
    const auto file = variants_index_file_name(wheel.filename().string());
    std::string text;
    if (read_regular_file(index.wheels_dir / file, 16u << 20, text).empty())
      if (auto document = nlohmann::json::parse(text, nullptr, false); document.is_object()) existing[file] = document;
  }
  const auto documents = merged_variants_documents(entry.variants, existing);
  for (const auto& [file, text] : documents) {
    const auto project = normalize_project_name(file.substr(0, file.find('-')));
    if (existing.count(file)) relinked[project].insert(file);
    by_project[project].push_back({project, index.wheels_dir / file, sha256_hex(text)});
  }
  // Unlisted first, relinked, listed again (see refresh_locked).
  for (const auto& [project, names] : relinked)
    if (!update_project_page(index.simple_dir, project, {}, names)) return refresh_locked(cache_dir, store);
  for (const auto& wheel : entry.wheels)
    if (!same_file(wheel, index.wheels_dir / wheel.filename()))
      link_into_place(wheel, index.wheels_dir / wheel.filename());
  for (const auto& wheel : entry.variants)
    if (!same_file(wheel, index.wheels_dir / wheel.filename()))
      link_into_place(wheel, index.wheels_dir / wheel.filename());
  for (const auto& [file, text] : documents) write_variants_document(index.wheels_dir / file, text);
  for (const auto& [project, wheels] : by_project)
    if (!update_project_page(index.simple_dir, project, wheels, {})) return refresh_locked(cache_dir, store);
  return index;
}

std::map<std::string, std::string> variants_documents(const std::vector<std::filesystem::path>& variant_wheels) {
  return merged_variants_documents(variant_wheels, {});
}

}  // namespace archbuild
