#include "remote/s3_entry_listing.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sha256.h"
#include "remote/s3_bucket_layout.h"
#include "wheel/project_name.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_variant.h"

namespace archbuild {

namespace {

// A listing's LastModified to the second, comparable as text (servers
// differ in the fraction they print).
std::string listed_second_of(const S3Object& object) { return object.last_modified.substr(0, 19); }

// The variant wheel `name`'s variants document is linked on `links` with
// the document's sha256, and names the wheel's label.
bool s3_variants_document_lists(S3Client& bucket, S3PagesSeen& seen, const S3PageLinks& links,
                                const std::string& project, const std::string& name) {
  const auto document_name = variants_index_file_name(name);
  auto link = links.find(document_name);
  if (link == links.end()) return false;
  const auto& text = seen.document(bucket, s3_page_dir(project) + document_name);
  if (!text || sha256_hex(*text) != link->second.sha256) return false;
  auto document = nlohmann::json::parse(*text, nullptr, false);
  auto wheel = WheelName::parse(name);
  return wheel && document.is_object() && document.contains("variants") && document["variants"].is_object() &&
         document["variants"].contains(wheel->variant);
}

}  // namespace

size_t list_s3_entry(S3Client& bucket, const std::string& hash, S3PagesSeen& seen) {
  std::map<std::string, std::vector<PageLink>> by_project;
  std::map<std::string, nlohmann::json> documents;  // {name}-{version}-variants.json -> merged variant.json files
  for (const auto& object : bucket.list(s3_entry_path(hash))) {
    if (!is_plain_s3_key(object.path)) continue;
    const auto inside = object.path.substr(s3_entry_path(hash).size());
    const bool wheel = inside.rfind("wheels/", 0) == 0, variant = inside.rfind("variants/", 0) == 0;
    const auto file = std::filesystem::path(inside).filename().string();
    if ((!wheel && !variant) || !file.ends_with(".whl")) continue;
    auto head = bucket.head(object.path);
    if (!head || head->sha256.size() != 64) fail_environment(bucket.url(object.path) + " has no sha256 recorded");
    by_project[s3_wheel_project(file)].push_back({s3_page_href(object.path), head->sha256, file});
    if (!variant) continue;
    auto text = bucket.get_text(object.path + ".json", 1 << 20);
    auto document = text ? nlohmann::json::parse(text->text, nullptr, false) : nlohmann::json();
    if (!document.is_object() || !document["variants"].is_object()) continue;
    auto& into = documents[variants_index_file_name(file)];
    if (into.is_null()) into = document;
    for (const auto& [label, properties] : document["variants"].items()) into["variants"][label] = properties;
  }
  by_project.erase("");
  size_t linked = 0;
  std::set<std::string> projects;
  for (const auto& [project, added] : by_project) {
    std::map<std::string, std::string> project_documents;
    for (const auto& [file, document] : documents)
      if (normalize_project_name(file.substr(0, file.find('-'))) == project) project_documents[file] = document.dump();
    seen.projects[project] = update_s3_page(bucket, project, [&](S3PageLinks& links) {
      for (const auto& link : added) links[link.file_name] = link;
      settle_s3_variants_documents(bucket, project, links, project_documents);
    });
    std::erase_if(seen.documents,
                  [&](const auto& document) { return document.first.starts_with(s3_page_dir(project)); });
    linked += added.size();
    projects.insert(project);
  }
  seen.root = add_to_s3_root_page(bucket, projects);
  return linked;
}

std::optional<S3EntryLeftAsItIs> s3_entry_listed_unchanged(S3Client& bucket, const StoreEntry& entry,
                                                           const S3NewestHolders& newest, S3PagesSeen& seen) {
  if (!entry.manifest) return std::nullopt;
  std::map<std::string, S3Object> objects;  // path inside the entry -> object
  for (auto& object : bucket.list(s3_entry_path(entry.hash)))
    objects[object.path.substr(s3_entry_path(entry.hash).size())] = std::move(object);
  auto key_file = objects.find(kS3KeyFile);
  if (key_file == objects.end() || !objects.count(kS3ManifestFile)) return std::nullopt;
  for (const auto& [inside, object] : objects)
    if (listed_second_of(object) > listed_second_of(key_file->second)) return std::nullopt;
  std::map<std::string, std::string> manifest_sha256;
  for (const auto& wheel : entry.manifest->wheels) manifest_sha256[wheel.file] = wheel.sha256;
  std::set<std::string> projects;
  S3EntryLeftAsItIs found;
  auto linked = [&](const std::filesystem::path& file, const std::string& dir) {
    const auto name = file.filename().string();
    std::error_code error;
    auto object = objects.find(dir + name);
    if (object == objects.end() || object->second.size != std::filesystem::file_size(file, error) || error)
      return false;
    const auto project = s3_wheel_project(name);
    if (project.empty()) return false;
    projects.insert(project);
    const auto& links = seen.project(bucket, project);
    auto link = links.find(name);
    auto holder = newest.find(name);
    const auto& owner = holder == newest.end() ? entry.hash : holder->second;
    if (link == links.end() || link->second.href != s3_page_href(s3_entry_path(owner, dir + name))) return false;
    if (owner != entry.hash) found.relies_on.insert(owner);
    if (dir == "variants/") return s3_variants_document_lists(bucket, seen, links, project, name);
    auto sha256 = manifest_sha256.find(name);
    return owner != entry.hash || (sha256 != manifest_sha256.end() && link->second.sha256 == sha256->second);
  };
  for (const auto& wheel : entry.wheels)
    if (!linked(wheel, "wheels/")) return std::nullopt;
  for (const auto& wheel : entry.variants)
    if (!linked(wheel, "variants/")) return std::nullopt;
  const auto& root = seen.root_page(bucket);
  for (const auto& project : projects)
    if (!root.count(project)) return std::nullopt;
  found.links = entry.wheels.size() + entry.variants.size();
  return found;
}

}  // namespace archbuild
