#include "remote/s3_pages.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/store_maintenance.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "remote/s3_bucket_layout.h"
#include "wheel/project_name.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_variant.h"

namespace archbuild {

namespace {

// A read-modify-write that another writer keeps beating: tried again after
// a growing pause, and given up (exit 3) rather than spinning.
void after_s3_write_conflict(int& attempt, const std::string& what) {
  constexpr int kAttempts = 40;
  if (++attempt >= kAttempts)
    fail_environment(what + " changed under each of " + std::to_string(kAttempts) +
                     " conditional writes: another writer keeps rewriting it, or the server refuses If-Match");
  std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10 * attempt, 250)));
  if (pending_interrupt()) throw UserError(ExitCode::interrupted, "interrupted");
}

std::set<std::string> s3_root_page_projects(const std::string& page) {
  std::set<std::string> projects;
  constexpr std::string_view kHref = "<a href=\"";
  for (size_t at = page.find(kHref); at != std::string::npos; at = page.find(kHref, at)) {
    at += kHref.size();
    auto end = page.find("/\"", at);
    if (end == std::string::npos) break;
    if (auto name = percent_decode(page.substr(at, end - at))) projects.insert(*name);
    at = end;
  }
  return projects;
}

// The object parsed, or its type's empty value when it is absent.
template <typename Parse>
auto read_s3_page_object(S3Client& bucket, const std::string& path, Parse parse) {
  auto text = bucket.get_text(path, kMaxS3PageBytes);
  return text ? parse(text->text) : decltype(parse(text->text)){};
}

template <typename Value, typename Parse>
const Value& read_s3_page_object_once(std::map<std::string, Value>& seen, const std::string& key, S3Client& bucket,
                                      const std::string& path, Parse parse) {
  auto found = seen.find(key);
  if (found == seen.end()) found = seen.emplace(key, read_s3_page_object(bucket, path, parse)).first;
  return found->second;
}

}  // namespace

S3PageLinks parse_s3_page(const std::string& page) {
  S3PageLinks links;
  for (const auto& link : index_page_links(page)) {
    auto href = percent_decode(link.href);
    if (!href) continue;
    PageLink parsed{*href, link.sha256, std::filesystem::path(*href).filename().string()};
    links[parsed.file_name] = parsed;
  }
  return links;
}

std::string s3_wheel_project(const std::string& file_name) {
  auto name = WheelName::parse(file_name);
  return name ? normalize_project_name(name->name) : std::string();
}

S3PageLinks update_s3_page(S3Client& bucket, const std::string& project,
                           const std::function<void(S3PageLinks&)>& change) {
  for (int attempt = 0;; after_s3_write_conflict(attempt, bucket.url(s3_page_path(project)))) {
    auto page = bucket.get_text(s3_page_path(project), kMaxS3PageBytes);
    S3PageLinks links = page ? parse_s3_page(page->text) : S3PageLinks{};
    const auto before = links;
    change(links);
    bool same = links.size() == before.size();
    for (auto a = links.cbegin(), b = before.cbegin(); same && a != links.end(); ++a, ++b)
      same = a->first == b->first && a->second.href == b->second.href && a->second.sha256 == b->second.sha256;
    if (page && same) return links;
    std::vector<PageLink> list;
    for (const auto& [name, link] : links) list.push_back(link);
    auto condition = page ? WriteCondition::if_unchanged(page->etag) : WriteCondition::if_absent();
    if (bucket.put_text(s3_page_path(project), project_page_html(project, list), kS3HtmlType, condition)) return links;
    log::verbose("{} changed while being rewritten; reading it again", bucket.url(s3_page_path(project)));
  }
}

std::set<std::string> add_to_s3_root_page(S3Client& bucket, const std::set<std::string>& projects) {
  for (int attempt = 0;; after_s3_write_conflict(attempt, bucket.url(kS3RootPage))) {
    auto page = bucket.get_text(kS3RootPage, kMaxS3PageBytes);
    auto listed = page ? s3_root_page_projects(page->text) : std::set<std::string>{};
    const auto before = listed.size();
    listed.insert(projects.begin(), projects.end());
    if (page && listed.size() == before) return listed;
    auto condition = page ? WriteCondition::if_unchanged(page->etag) : WriteCondition::if_absent();
    if (bucket.put_text(kS3RootPage, root_page_html(listed), kS3HtmlType, condition)) return listed;
  }
}

void settle_s3_variants_documents(S3Client& bucket, const std::string& project, S3PageLinks& links,
                                  const std::map<std::string, std::string>& added_documents) {
  std::map<std::string, std::set<std::string>> labels;  // document file -> labels of linked variant wheels
  for (const auto& [file, link] : links)
    if (auto name = WheelName::parse(file); name && !name->variant.empty())
      labels[variants_index_file_name(file)].insert(name->variant);
  std::set<std::string> documents;
  for (const auto& [file, link] : links)
    if (file.ends_with(kVariantsSuffix)) documents.insert(file);
  for (const auto& [file, text] : added_documents) documents.insert(file);
  for (const auto& file : documents) {
    const auto object = s3_page_dir(project) + file;
    for (int attempt = 0;; after_s3_write_conflict(attempt, bucket.url(object))) {
      auto now = bucket.get_text(object, kMaxS3PageBytes);
      auto document = now ? nlohmann::json::parse(now->text, nullptr, false) : nlohmann::json();
      if (!document.is_object()) document = nlohmann::json::object();
      if (auto added = added_documents.find(file); added != added_documents.end()) {
        auto merged = nlohmann::json::parse(added->second, nullptr, false);
        if (merged.is_object() && merged["variants"].is_object()) {
          if (!document.contains("variants")) document = merged;
          for (const auto& [label, properties] : merged["variants"].items()) document["variants"][label] = properties;
        }
      }
      if (document["variants"].is_object())
        for (auto it = document["variants"].begin(); it != document["variants"].end();)
          it = labels[file].count(it.key()) ? std::next(it) : document["variants"].erase(it);
      if (!document["variants"].is_object() || document["variants"].empty()) {
        links.erase(file);
        break;
      }
      const auto text = document.dump(2) + "\n";
      if (now && now->text == text) {
        links[file] = {file, sha256_hex(text), file};
        break;
      }
      auto condition = now ? WriteCondition::if_unchanged(now->etag) : WriteCondition::if_absent();
      if (bucket.put_text(object, text, kS3JsonType, condition)) {
        links[file] = {file, sha256_hex(text), file};
        break;
      }
    }
  }
}

const S3PageLinks& S3PagesSeen::project(S3Client& bucket, const std::string& name) {
  return read_s3_page_object_once(projects, name, bucket, s3_page_path(name), parse_s3_page);
}

const std::optional<std::string>& S3PagesSeen::document(S3Client& bucket, const std::string& path) {
  return read_s3_page_object_once(documents, path, bucket, path,
                                  [](const std::string& text) { return std::optional(text); });
}

const std::set<std::string>& S3PagesSeen::root_page(S3Client& bucket) {
  if (!root) root = read_s3_page_object(bucket, kS3RootPage, s3_root_page_projects);
  return *root;
}

}  // namespace archbuild
