#include "remote/s3_cache.h"

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "cache/index_link.h"
#include "cache/provenance.h"
#include "cache/simple_index.h"
#include "cache/store_maintenance.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "remote/remote_lock.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_variant.h"

namespace archbuild {

namespace {

// The bucket's layout, named in one place (see s3_cache.h).
constexpr const char* kMarker = ".archbuild-cache";
constexpr const char* kMarkerText =
    "archbuild shared cache 1\n(archbuild cache push writes store/, simple/ and locks/ here)\n";
constexpr const char* kKeyFile = "key.txt";
constexpr const char* kManifestFile = "manifest.json";
constexpr uint64_t kMaxPageBytes = 16u << 20;
std::string entry_path(const std::string& hash, const std::string& inside = "") {
  return "store/" + hash + "/" + inside;
}
std::string page_dir(const std::string& project) { return "simple/" + project + "/"; }
std::string page_path(const std::string& project) { return page_dir(project) + "index.html"; }
std::string lock_path(const std::string& hash) { return "locks/" + hash; }
constexpr const char* kRootPage = "simple/index.html";
// A project page links a store object by this relative href (and readers
// resolve it back the same way).
constexpr std::string_view kPageToRoot = "../../";
std::string page_href(const std::string& object_path) { return std::string(kPageToRoot) + object_path; }
bool is_marker(const RemoteText& marker) { return marker.text.rfind("archbuild shared cache 1\n", 0) == 0; }

constexpr const char* kHtml = "text/html; charset=utf-8";
constexpr const char* kJson = "application/json";
constexpr const char* kBinary = "application/octet-stream";

// A key archbuild could have written: segments that are neither empty, '.'
// nor '..', and no control characters. Anything else in store/ is someone
// else's: never fetched, linked or deleted by archbuild.
bool plain_key(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const auto segment = path.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") return false;
    start = end + 1;
  }
  for (unsigned char c : path)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

// The marker claims the prefix for archbuild: written into an empty prefix
// only (If-None-Match: *), so a prefix holding someone else's objects is
// refused before anything is written.
void claim_prefix(S3Client& bucket) {
  if (auto marker = bucket.get_text(kMarker, 4096)) {
    if (!is_marker(*marker))
      fail_bad_input(bucket.location().text() + "/" + kMarker + " is not the marker archbuild writes; refusing " +
                     bucket.location().text());
    return;
  }
  auto objects = bucket.list("");
  for (const auto& object : objects)
    if (object.path != kMarker)
      fail_bad_input("refusing " + bucket.location().text() + ": it holds " + bucket.location().text() + "/" +
                     object.path + " and no " + kMarker +
                     ", so it is not a shared cache archbuild made; push to an empty or new prefix");
  bucket.put_text(kMarker, kMarkerText, "text/plain", WriteCondition::if_absent());
}

// Every guarantee between pushers rests on conditional writes. A server that
// ignores If-None-Match would let two pushers both take one lock: found here,
// by a conditional write over the marker that must be refused, before any
// entry is written.
void check_conditional_writes(S3Client& bucket) {
  const bool none_match_ignored = bucket.put_text(kMarker, kMarkerText, "text/plain", WriteCondition::if_absent());
  const bool match_ignored = !none_match_ignored &&
                             bucket.put_text(kMarker, kMarkerText, "text/plain",
                                             WriteCondition::if_unchanged("\"archbuild-no-such-etag\""));
  if (none_match_ignored || match_ignored)
    fail_environment(bucket.settings().endpoint + " ignores conditional writes (a PUT with " +
                     (none_match_ignored ? "If-None-Match: *" : "If-Match on another ETag") +
                     " replaced an existing object): two pushers could not be kept apart there, so archbuild does "
                     "not push to it");
}

// verify and gc read and delete only under a prefix archbuild claimed.
void require_marker(S3Client& bucket) {
  auto marker = bucket.get_text(kMarker, 4096);
  if (!marker)
    fail_bad_input(bucket.location().text() + " holds no " + kMarker +
                   ": it is not a cache `archbuild cache push` made, so archbuild reads and removes nothing there");
  if (!is_marker(*marker))
    fail_bad_input(bucket.location().text() + "/" + kMarker + " is not the marker archbuild writes");
}

// A read-modify-write that another writer keeps beating: tried again after
// a growing pause, and given up (exit 3) rather than spinning.
void after_conflict(int& attempt, const std::string& what) {
  constexpr int kAttempts = 40;
  if (++attempt >= kAttempts)
    fail_environment(what + " changed under each of " + std::to_string(kAttempts) +
                     " conditional writes: another writer keeps rewriting it, or the server refuses If-Match");
  std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10 * attempt, 250)));
  if (pending_interrupt()) throw UserError(ExitCode::interrupted, "interrupted");
}

void pause(const S3CacheOptions& options) {
  if (options.pause_between_objects.count() > 0) std::this_thread::sleep_for(options.pause_between_objects);
  if (pending_interrupt()) throw UserError(ExitCode::interrupted, "interrupted");
}

struct ManifestWheel {
  std::string file, sha256;
  uint64_t size = 0;
};

std::vector<ManifestWheel> manifest_wheels(const std::string& text) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  std::vector<ManifestWheel> wheels;
  if (!json.is_object()) return wheels;
  try {
    for (const auto& wheel : BuildReport::from_json(json).wheels)
      wheels.push_back({wheel.file, wheel.sha256, wheel.size});
  } catch (const std::exception&) {
  }
  return wheels;
}

// The bucket's entry is whole when key.txt is there and every wheel its
// manifest records is there with that sha256 (the digest put_file keeps).
bool whole_in_bucket(S3Client& bucket, const std::string& hash, std::vector<std::string>* damage) {
  if (!bucket.head(entry_path(hash, kKeyFile))) return false;
  auto manifest = bucket.get_text(entry_path(hash, kManifestFile), kMaxManifestBytes);
  std::vector<std::string> problems;
  if (!manifest) problems.push_back("manifest.json is missing");
  auto wheels = manifest ? manifest_wheels(manifest->text) : std::vector<ManifestWheel>{};
  if (manifest && wheels.empty()) problems.push_back("manifest.json lists no wheel");
  for (const auto& wheel : wheels) {
    auto object = bucket.head(entry_path(hash, "wheels/" + wheel.file));
    if (!object)
      problems.push_back(wheel.file + ": in manifest.json but missing");
    else if (object->sha256 != wheel.sha256)
      problems.push_back(wheel.file + ": sha256 differs from the manifest's");
  }
  if (damage) *damage = problems;
  return problems.empty();
}

std::string file_sha256(const std::filesystem::path& file) {
  std::string digest;
  if (auto why = hash_regular_file(file, digest); !why.empty()) fail_environment(file.string() + " " + why);
  return digest;
}

[[noreturn]] void lost_lock(S3Client& bucket, const std::string& hash) {
  fail_environment("the lock " + bucket.url(lock_path(hash)) +
                   " was taken over by another pusher (this push stalled past the lock's stale time); nothing of " +
                   hash.substr(0, 12) + " was committed by this push");
}

// Uploads the entry's objects, key.txt last.
void upload_entry(S3Client& bucket, const StoreEntry& entry, const std::string& manifest,
                  const std::vector<std::pair<std::string, std::string>>& extra, RemoteLock& lock,
                  const S3CacheOptions& options) {
  for (const auto& wheel : entry.wheels) {
    bucket.put_file(entry_path(entry.hash, "wheels/" + wheel.filename().string()), wheel, file_sha256(wheel), kBinary);
    pause(options);
  }
  for (const auto& wheel : entry.variants) {
    bucket.put_file(entry_path(entry.hash, "variants/" + wheel.filename().string()), wheel, file_sha256(wheel),
                    kBinary);
    std::string document;
    if (read_regular_file(wheel.string() + ".json", 1 << 20, document).empty())
      bucket.put_text(entry_path(entry.hash, "variants/" + wheel.filename().string() + ".json"), document, kJson);
    pause(options);
  }
  for (const auto& [name, text] : extra) bucket.put_text(entry_path(entry.hash, name), text, kJson);
  bucket.put_text(entry_path(entry.hash, kManifestFile), manifest, kJson);
  pause(options);
  if (!lock.renew()) lost_lock(bucket, entry.hash);
  bucket.put_text(entry_path(entry.hash, kKeyFile), entry.key_text, "text/plain");
}

// One project page, read and rewritten with If-Match on what was read until
// no other writer came between: `change` edits the links (file name ->
// link) and may read other objects; it runs again on every retry.
using PageLinks = std::map<std::string, PageLink>;

PageLinks parse_page(const std::string& page) {
  PageLinks links;
  for (const auto& link : index_page_links(page)) {
    auto href = percent_decode(link.href);
    if (!href) continue;
    PageLink parsed{*href, link.sha256, std::filesystem::path(*href).filename().string()};
    links[parsed.file_name] = parsed;
  }
  return links;
}

// Returns the links the page holds afterwards.
PageLinks update_page(S3Client& bucket, const std::string& project, const std::function<void(PageLinks&)>& change) {
  for (int attempt = 0;; after_conflict(attempt, bucket.url(page_path(project)))) {
    auto page = bucket.get_text(page_path(project), kMaxPageBytes);
    PageLinks links = page ? parse_page(page->text) : PageLinks{};
    const auto before = links;
    change(links);
    bool same = links.size() == before.size();
    for (auto a = links.cbegin(), b = before.cbegin(); same && a != links.end(); ++a, ++b)
      same = a->first == b->first && a->second.href == b->second.href && a->second.sha256 == b->second.sha256;
    if (page && same) return links;
    std::vector<PageLink> list;
    for (const auto& [name, link] : links) list.push_back(link);
    auto condition = page ? WriteCondition::if_unchanged(page->etag) : WriteCondition::if_absent();
    if (bucket.put_text(page_path(project), project_page_html(project, list), kHtml, condition)) return links;
    log::verbose("{} changed while being rewritten; reading it again", bucket.url(page_path(project)));
  }
}

std::set<std::string> root_projects(const std::string& page) {
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

// The root page gains projects (read and rewritten as update_page does);
// returns the projects it lists afterwards.
std::set<std::string> add_to_root(S3Client& bucket, const std::set<std::string>& projects) {
  for (int attempt = 0;; after_conflict(attempt, bucket.url(kRootPage))) {
    auto page = bucket.get_text(kRootPage, kMaxPageBytes);
    auto listed = page ? root_projects(page->text) : std::set<std::string>{};
    const auto before = listed.size();
    listed.insert(projects.begin(), projects.end());
    if (page && listed.size() == before) return listed;
    auto condition = page ? WriteCondition::if_unchanged(page->etag) : WriteCondition::if_absent();
    if (bucket.put_text(kRootPage, root_page_html(listed), kHtml, condition)) return listed;
  }
}

// The pages as this push last read or wrote them: each read once, so
// finding an entry already listed costs no page request of its own.
struct PagesSeen {
  std::map<std::string, PageLinks> projects;
  std::optional<std::set<std::string>> root;
  std::map<std::string, std::optional<std::string>> documents;  // simple/PROJECT/...-variants.json -> its text

  // The object parsed, or its type's empty value when it is absent.
  template <typename Parse>
  static auto read_object(S3Client& bucket, const std::string& path, Parse parse) {
    auto text = bucket.get_text(path, kMaxPageBytes);
    return text ? parse(text->text) : decltype(parse(text->text)){};
  }
  template <typename Value, typename Parse>
  static const Value& read_once(std::map<std::string, Value>& seen, const std::string& key, S3Client& bucket,
                                const std::string& path, Parse parse) {
    auto found = seen.find(key);
    if (found == seen.end()) found = seen.emplace(key, read_object(bucket, path, parse)).first;
    return found->second;
  }

  const PageLinks& project(S3Client& bucket, const std::string& name) {
    return read_once(projects, name, bucket, page_path(name), parse_page);
  }
  const std::optional<std::string>& document(S3Client& bucket, const std::string& path) {
    return read_once(documents, path, bucket, path, [](const std::string& text) { return std::optional(text); });
  }
  const std::set<std::string>& root_page(S3Client& bucket) {
    if (!root) root = read_object(bucket, kRootPage, root_projects);
    return *root;
  }
};

std::string project_of(const std::string& file_name) {
  auto name = WheelName::parse(file_name);
  return name ? normalize_project_name(name->name) : std::string();
}

// The variants documents linked on a page follow the variant wheels it
// links: each keeps the labels of the variant wheels still linked for its
// version (a document left with none is unlinked), and each link carries
// the sha256 of the document as it is now. `added` are documents to merge in.
void settle_variants_documents(S3Client& bucket, const std::string& project, PageLinks& links,
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
    const auto object = page_dir(project) + file;
    for (int attempt = 0;; after_conflict(attempt, bucket.url(object))) {
      auto now = bucket.get_text(object, kMaxPageBytes);
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
      if (bucket.put_text(object, text, kJson, condition)) {
        links[file] = {file, sha256_hex(text), file};
        break;
      }
    }
  }
}

// Lists a whole entry of the bucket on its projects' pages (the caller
// holds its lock and has seen its key.txt there). The links carry the
// digests of the bucket's objects, which are what readers download.
size_t list_entry(S3Client& bucket, const std::string& hash, PagesSeen& seen) {
  std::map<std::string, std::vector<PageLink>> by_project;
  std::map<std::string, nlohmann::json> documents;  // {name}-{version}-variants.json -> merged variant.json files
  for (const auto& object : bucket.list(entry_path(hash))) {
    if (!plain_key(object.path)) continue;
    const auto inside = object.path.substr(entry_path(hash).size());
    const bool wheel = inside.rfind("wheels/", 0) == 0, variant = inside.rfind("variants/", 0) == 0;
    const auto file = std::filesystem::path(inside).filename().string();
    if ((!wheel && !variant) || !file.ends_with(".whl")) continue;
    auto head = bucket.head(object.path);
    if (!head || head->sha256.size() != 64) fail_environment(bucket.url(object.path) + " has no sha256 recorded");
    by_project[project_of(file)].push_back({page_href(object.path), head->sha256, file});
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
    seen.projects[project] = update_page(bucket, project, [&](PageLinks& links) {
      for (const auto& link : added) links[link.file_name] = link;
      settle_variants_documents(bucket, project, links, project_documents);
    });
    std::erase_if(seen.documents, [&](const auto& document) { return document.first.starts_with(page_dir(project)); });
    linked += added.size();
    projects.insert(project);
  }
  seen.root = add_to_root(bucket, projects);
  return linked;
}

// File name -> the newest source entry holding it: the entry a page links
// that name to after a push, as in the local index.
using NewestHolders = std::map<std::string, std::string>;

// A listing's LastModified to the second, comparable as text (servers
// differ in the fraction they print).
std::string listed_second(const S3Object& object) { return object.last_modified.substr(0, 19); }

// An entry a push leaves as it is, found from one listing of the entry and
// the pages as read once per push:
//  - key.txt and manifest.json there, and no object of the entry newer than
//    key.txt (key.txt is written last, so a wheel replaced since is newer);
//  - each source wheel and variant wheel there with the source's size;
//  - each linked from its project's page to this entry's object, a wheel
//    with its manifest's sha256, or to the newer source entry holding the
//    same file name (which this push comes to later: `relies_on`);
//  - each variant wheel's variants document linked with the document's
//    sha256 and naming the wheel's label; each project on the root page.
// A variant wheel's link is not compared with a digest: its object is not
// newer than key.txt, so it is the one listed. The bytes themselves are
// what `cache verify` reads. nullopt sends the entry the locked way
// (checked, uploaded where needed, listed again).
struct LeftAsItIs {
  size_t links = 0;
  std::set<std::string> relies_on;  // newer source entries the page links a shared file name to
};

std::optional<LeftAsItIs> listed_unchanged(S3Client& bucket, const StoreEntry& entry, const NewestHolders& newest,
                                           PagesSeen& seen) {
  if (!entry.manifest) return std::nullopt;
  std::map<std::string, S3Object> objects;  // path inside the entry -> object
  for (auto& object : bucket.list(entry_path(entry.hash)))
    objects[object.path.substr(entry_path(entry.hash).size())] = std::move(object);
  auto key_file = objects.find(kKeyFile);
  if (key_file == objects.end() || !objects.count(kManifestFile)) return std::nullopt;
  for (const auto& [inside, object] : objects)
    if (listed_second(object) > listed_second(key_file->second)) return std::nullopt;
  std::map<std::string, std::string> manifest_sha256;
  for (const auto& wheel : entry.manifest->wheels) manifest_sha256[wheel.file] = wheel.sha256;
  std::set<std::string> projects;
  LeftAsItIs found;
  auto variants_document_lists = [&](const PageLinks& links, const std::string& project, const std::string& name) {
    const auto document_name = variants_index_file_name(name);
    auto link = links.find(document_name);
    if (link == links.end()) return false;
    const auto& text = seen.document(bucket, page_dir(project) + document_name);
    if (!text || sha256_hex(*text) != link->second.sha256) return false;
    auto document = nlohmann::json::parse(*text, nullptr, false);
    auto wheel = WheelName::parse(name);
    return wheel && document.is_object() && document.contains("variants") && document["variants"].is_object() &&
           document["variants"].contains(wheel->variant);
  };
  auto linked = [&](const std::filesystem::path& file, const std::string& dir) {
    const auto name = file.filename().string();
    std::error_code error;
    auto object = objects.find(dir + name);
    if (object == objects.end() || object->second.size != std::filesystem::file_size(file, error) || error)
      return false;
    const auto project = project_of(name);
    if (project.empty()) return false;
    projects.insert(project);
    const auto& links = seen.project(bucket, project);
    auto link = links.find(name);
    auto holder = newest.find(name);
    const auto& owner = holder == newest.end() ? entry.hash : holder->second;
    if (link == links.end() || link->second.href != page_href(entry_path(owner, dir + name))) return false;
    if (owner != entry.hash) found.relies_on.insert(owner);
    if (dir == "variants/") return variants_document_lists(links, project, name);
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

// One entry's turn in a push: left as it is (quick), or under its lock.
struct EntryTurn {
  bool there = false;  // the entry is in the bucket and listed afterwards
  std::optional<LeftAsItIs> left;
};

EntryTurn push_entry(const WheelStore& from, S3Client& bucket, const CacheKey& key, const S3CacheOptions& options,
                     const NewestHolders* newest, PagesSeen& seen, S3PushResult& result) {
  // The source entry is locked while it is read and uploaded: a `cache gc`
  // of the source waits rather than removing it mid-upload.
  FileLock source_lock(from.lock_path(key));
  auto entry = entry_to_push(from, key, result);
  if (!entry) return {};
  // Nothing is written for an entry found whole and listed, so it needs no lock.
  if (newest)
    if (auto left = listed_unchanged(bucket, *entry, *newest, seen)) {
      log::verbose("{}: there and listed; left as it is", bucket.url(entry_path(key.hash)));
      result.present.push_back(key.hash);
      result.listed_wheels += left->links;
      return {true, left};
    }
  RemoteLock lock(bucket, lock_path(key.hash), options.lock_stale_after);
  lock.acquire();
  std::vector<std::string> damage;
  if (whole_in_bucket(bucket, key.hash, &damage)) {
    result.present.push_back(key.hash);
  } else {
    auto manifest = read_own_file(entry->dir / kManifestFile, kMaxManifestBytes);
    if (!manifest) {
      result.gone_from_source.push_back(key.hash);
      return {};
    }
    std::vector<std::pair<std::string, std::string>> extra;
    for (const char* name : {kProvenanceFile, kSbomFile})
      if (auto text = read_own_file(entry->dir / name, kMaxManifestBytes)) extra.emplace_back(name, *text);
    upload_entry(bucket, *entry, *manifest, extra, lock, options);
    if (damage.empty()) {
      result.pushed.push_back(key.hash);
    } else {
      result.repaired.push_back(key.hash);
      for (const auto& problem : damage) result.repairs.push_back(key.hash + ": " + problem);
    }
  }
  if (!lock.renew()) lost_lock(bucket, key.hash);
  result.listed_wheels += list_entry(bucket, key.hash, seen);
  return {true, std::nullopt};
}

}  // namespace

S3PushResult push_to_s3(const WheelStore& from, S3Client& bucket, const S3CacheOptions& options) {
  // Oldest first: a file name two entries share ends up linked to the newest,
  // as in the local index.
  std::vector<CacheKey> pending;
  NewestHolders newest;
  for (auto& entry : from.entries()) {
    if (entry.wheels.empty()) continue;
    pending.insert(pending.begin(), {entry.key_text, entry.hash});
    for (const auto* files : {&entry.wheels, &entry.variants})
      for (const auto& file : *files)
        newest.emplace(file.filename().string(), entry.hash);  // entries() is newest first
  }
  claim_prefix(bucket);
  check_conditional_writes(bucket);
  S3PushResult result;
  PagesSeen seen;
  // Entries left as they are because a newer entry holds a file name they
  // share, by that entry: when its turn finds it not there (damaged or gone
  // from the source), they go the locked way at once and take the name.
  std::map<std::string, std::vector<std::pair<CacheKey, size_t>>> relying;
  std::set<std::string> relisted;
  InterruptibleScope between_entries;
  for (const auto& key : pending) {
    if (pending_interrupt()) break;
    const auto turn = push_entry(from, bucket, key, options, &newest, seen, result);
    if (!turn.there)
      for (const auto& [reliant, links] : relying[key.hash]) {
        if (!relisted.insert(reliant.hash).second) continue;
        std::erase(result.present, reliant.hash);
        result.listed_wheels -= links;
        push_entry(from, bucket, reliant, options, nullptr, seen, result);
      }
    if (turn.left)
      for (const auto& owner : turn.left->relies_on) relying[owner].emplace_back(key, turn.left->links);
  }
  if (pending_interrupt())
    throw UserError(ExitCode::interrupted, "interrupted: " + std::to_string(result.pushed.size()) + " of " +
                                               std::to_string(pending.size()) + " entries pushed; the index of " +
                                               bucket.location().text() + " lists only whole entries (run it again)");
  return result;
}

namespace {

struct BucketEntry {
  std::string hash;
  std::optional<S3Object> key_file;
  std::vector<S3Object> objects;
};

bool entry_hash(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The entries under store/ (a dir named by a sha256), each with its objects;
// `odd` gets the keys under store/ that are not an entry's plain objects.
std::map<std::string, BucketEntry> bucket_entries(S3Client& bucket, std::vector<std::string>* odd = nullptr) {
  std::map<std::string, BucketEntry> entries;
  for (auto& object : bucket.list("store/")) {
    const auto rest = object.path.substr(6);
    const auto slash = rest.find('/');
    if (slash == std::string::npos || !entry_hash(rest.substr(0, slash)) || !plain_key(object.path)) {
      if (odd) odd->push_back(object.path);
      continue;
    }
    auto& entry = entries[rest.substr(0, slash)];
    entry.hash = rest.substr(0, slash);
    if (rest.substr(slash + 1) == kKeyFile) entry.key_file = object;
    entry.objects.push_back(std::move(object));
  }
  return entries;
}

// What an entry's path inside store/KEY/ may be: what archbuild writes there.
bool expected_entry_file(const std::string& inside) {
  if (inside.find("..") != std::string::npos || inside.empty() || inside[0] == '/') return false;
  if (inside == kKeyFile || inside == kManifestFile || inside == kProvenanceFile || inside == kSbomFile) return true;
  for (const char* dir : {"wheels/", "variants/"})
    if (inside.rfind(dir, 0) == 0 && inside.find('/', std::string_view(dir).size()) == std::string::npos &&
        inside.size() > std::string_view(dir).size())
      return true;
  return false;
}

}  // namespace

S3VerifyResult verify_s3(S3Client& bucket, const std::filesystem::path& scratch, const std::vector<Ed25519Key>& trusted,
                         bool require_signature) {
  require_marker(bucket);
  S3VerifyResult result;
  std::map<std::string, std::string> digests;  // object path -> sha256 of what was downloaded
  std::set<std::string> wheel_names;           // every entry's wheel file names
  std::set<std::string> objects;
  // {name}-{version}-variants.json -> the variant.json files of the entries'
  // variant wheels, merged: what a served variants document may claim.
  std::map<std::string, nlohmann::json> vouched_variants;
  std::vector<std::string> odd;
  auto entries = bucket_entries(bucket, &odd);
  for (const auto& key : odd)
    result.problems.push_back(key + ": not an object archbuild writes in store/ (left alone)");
  for (const auto& [hash, listed] : entries) {
    for (const auto& object : listed.objects) objects.insert(object.path);
    if (!listed.key_file) {
      result.unfinished.push_back(hash);
      continue;
    }
    ++result.entries;
    const auto dir = scratch / "store" / hash;
    std::filesystem::remove_all(dir);
    bool fetched = true;
    for (const auto& object : listed.objects) {
      const auto inside = object.path.substr(entry_path(hash).size());
      if (!expected_entry_file(inside)) {
        result.problems.push_back(hash + ": " + object.path + " is not a file archbuild writes in an entry");
        fetched = false;
        continue;
      }
      std::filesystem::create_directories((dir / inside).parent_path());
      // No more than the listing said: an object that grows without end
      // while it is read stops there, a problem of this entry.
      try {
        if (!bucket.get_file(object.path, dir / inside, object.size)) {
          result.problems.push_back(hash + ": " + object.path + " was listed but is gone");
          fetched = false;
          continue;
        }
      } catch (const UserError& error) {
        if (error.code() != ExitCode::bad_input) throw;
        result.problems.push_back(hash + ": " + error.what());
        fetched = false;
        continue;
      }
      digests[object.path] = file_sha256(dir / inside);
    }
    WheelStore store(scratch);
    std::optional<StoreEntry> entry;
    for (auto& candidate : store.entries())
      if (candidate.hash == hash) entry = std::move(candidate);
    if (!entry) {
      result.problems.push_back(hash + ": not readable as an entry");
    } else {
      for (const auto& wheel : entry->wheels) wheel_names.insert(wheel.filename().string());
      for (const auto& variant : entry->variants) {
        std::string text;
        if (!read_regular_file(variant.string() + ".json", 1 << 20, text).empty()) continue;
        auto document = nlohmann::json::parse(text, nullptr, false);
        if (!document.is_object() || !document["variants"].is_object()) continue;
        for (const auto& [label, properties] : document["variants"].items())
          vouched_variants[variants_index_file_name(variant.filename().string())][label] = properties;
      }
      auto problems = verify_store_entry(*entry);
      for (auto& problem : entry_provenance_problems(*entry, trusted, require_signature))
        problems.push_back(std::move(problem));
      for (const auto& problem : problems) result.problems.push_back(hash + ": " + problem);
    }
    (void)fetched;
    std::filesystem::remove_all(dir);
  }
  std::set<std::string> linked_names;
  for (const auto& object : bucket.list("simple/")) {
    if (!object.path.ends_with("/index.html") || object.path == kRootPage) continue;
    const auto project_dir = object.path.substr(0, object.path.size() - std::string_view("index.html").size());
    auto page = bucket.get_text(object.path, kMaxPageBytes);
    if (!page) continue;
    for (const auto& [file, link] : parse_page(page->text)) {
      // hrefs are relative to simple/PROJECT/: ../../store/... or a document beside the page.
      const auto judged = judge_index_link(project_dir, link.href);
      if (judged.verdict != LinkVerdict::inside) {
        result.problems.push_back(object.path + ": link " + link.href + " leaves the cache");
        continue;
      }
      const std::string target = judged.path.string();
      std::string digest;
      std::optional<RemoteText> document;
      // A wheel is served from a store entry, whose manifest and provenance
      // vouch for it; one anywhere else is nobody's, whatever its digest.
      if (file.ends_with(".whl") && !digests.count(target)) {
        result.problems.push_back(object.path + ": links " + target + ", a wheel which no store entry publishes");
        continue;
      }
      if (auto known = digests.find(target); known != digests.end()) {
        digest = known->second;
      } else if (target.rfind("simple/", 0) == 0 && plain_key(target) &&
                 (document = bucket.get_text(target, kMaxPageBytes))) {
        digest = sha256_hex(document->text);
      } else {
        result.problems.push_back(object.path + ": links " + target + ", which is not there");
        continue;
      }
      // A variants document claims only what the store's variant wheels say.
      bool forged = false;
      if (document && file.ends_with(kVariantsSuffix)) {
        auto served = nlohmann::json::parse(document->text, nullptr, false);
        const auto& vouched = vouched_variants[file];
        if (!served.is_object() || !served["variants"].is_object()) {
          result.problems.push_back(target + ": not a variants document");
          forged = true;
        } else {
          for (const auto& [label, properties] : served["variants"].items())
            if (!vouched.contains(label) || vouched.at(label) != properties) {
              result.problems.push_back(target + ": claims the variant " + printable(label) +
                                        ", which no store entry's variant wheel says");
              forged = true;
            }
        }
      }
      // The document and the page linking it are two writes: a push killed
      // between them leaves a document that claims only vouched variants
      // under a link with its former digest, which the next push relinks.
      if (digest != link.sha256) {
        if (document && file.ends_with(kVariantsSuffix) && !forged)
          result.stale_links.push_back(target);
        else
          result.problems.push_back(object.path + ": the link to " + target + " says sha256 " + link.sha256 +
                                    ", the object is " + digest);
      }
      linked_names.insert(file);
    }
  }
  for (const auto& name : wheel_names)
    if (!linked_names.count(name)) result.unlisted.push_back(name);
  return result;
}

std::vector<S3GcStep> gc_s3(S3Client& bucket, size_t keep, bool dry_run, const S3CacheOptions& options,
                            const std::function<void(const S3GcStep&)>& on_step) {
  require_marker(bucket);
  auto listed = bucket_entries(bucket);
  std::vector<StoreEntry> entries;
  std::map<std::string, std::string> committed;  // hash -> key.txt's last-modified, newest first below
  for (const auto& [hash, bucket_entry] : listed) {
    if (!bucket_entry.key_file) continue;
    auto key_text = bucket.get_text(entry_path(hash, kKeyFile), kMaxKeyTextBytes);
    // An entry whose key text is not its name is not archbuild's (verify names
    // it): never kept in a group's place, never linked.
    if (!key_text || sha256_hex(key_text->text) != hash) continue;
    StoreEntry entry;
    entry.hash = hash;
    entry.key_text = key_text->text;
    entry.dir = entry_path(hash);
    try {
      entry.inputs = KeyInputs::parse(entry.key_text);
    } catch (const std::exception&) {
    }
    for (const auto& object : bucket_entry.objects) {
      const auto inside = object.path.substr(entry_path(hash).size());
      if (inside.rfind("wheels/", 0) == 0) entry.wheels.push_back(object.path);
      if (inside.rfind("variants/", 0) == 0 && inside.ends_with(".whl")) entry.variants.push_back(object.path);
    }
    committed[hash] = bucket_entry.key_file->last_modified;
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [&](const auto& a, const auto& b) { return committed[a.hash] > committed[b.hash]; });
  std::vector<S3GcStep> steps;
  // Unfinished pushes (objects, no key.txt): removed once their lock is free
  // or stale, and only if key.txt is still absent then.
  for (const auto& [hash, bucket_entry] : listed) {
    if (bucket_entry.key_file) continue;
    S3GcStep step{hash, "unfinished push", 0, true};
    for (const auto& object : bucket_entry.objects) step.bytes += object.size;
    if (!dry_run) {
      RemoteLock lock(bucket, lock_path(hash), options.lock_stale_after);
      lock.acquire();
      if (bucket.head(entry_path(hash, kKeyFile)))
        step.removed = false;
      else
        for (const auto& object : bucket.list(entry_path(hash)))
          if (plain_key(object.path)) bucket.remove(object.path);
    }
    if (on_step) on_step(step);
    steps.push_back(std::move(step));
  }
  const auto doomed = entries_to_collect(entries, keep);
  // A file name a collected entry linked goes to the newest kept entry that
  // has one of that name (as a local gc relinks it).
  std::set<std::string> doomed_hashes;
  for (const auto& entry : doomed) doomed_hashes.insert(entry.hash);
  std::map<std::string, std::string> kept_object;  // file name -> the newest kept entry's object
  for (const auto& entry : entries)
    if (!doomed_hashes.count(entry.hash))
      for (const auto* files : {&entry.wheels, &entry.variants})
        for (const auto& file : *files) kept_object.emplace(file.filename().string(), file.string());
  for (const auto& entry : doomed) {
    S3GcStep step{entry.hash, gc_group(entry), 0, true};
    for (const auto& object : listed[entry.hash].objects) step.bytes += object.size;
    if (!dry_run) {
      RemoteLock lock(bucket, lock_path(entry.hash), options.lock_stale_after);
      lock.acquire();
      auto now = bucket.head(entry_path(entry.hash, kKeyFile));
      if (!now || now->etag != listed[entry.hash].key_file->etag) {
        step.removed = false;
      } else {
        std::set<std::string> projects;
        for (const auto& wheel : entry.wheels) projects.insert(project_of(wheel.filename().string()));
        for (const auto& wheel : entry.variants) projects.insert(project_of(wheel.filename().string()));
        projects.erase("");
        const auto prefix = page_href(entry_path(entry.hash));
        for (const auto& project : projects)
          update_page(bucket, project, [&](PageLinks& links) {
            for (auto it = links.begin(); it != links.end();) {
              if (it->second.href.rfind(prefix, 0) != 0) {
                ++it;
                continue;
              }
              auto heir = kept_object.find(it->first);
              auto head = heir == kept_object.end() ? std::nullopt : bucket.head(heir->second);
              if (head && head->sha256.size() == 64) {
                it->second = {page_href(heir->second), head->sha256, it->first};
                ++it;
              } else {
                it = links.erase(it);
              }
            }
            settle_variants_documents(bucket, project, links, {});
          });
        if (!lock.renew()) lost_lock(bucket, entry.hash);
        bucket.remove(entry_path(entry.hash, kKeyFile));
        for (const auto& object : listed[entry.hash].objects) bucket.remove(object.path);
      }
    }
    if (on_step) on_step(step);
    steps.push_back(std::move(step));
  }
  return steps;
}

std::string s3_index_url(const S3Client& bucket, const std::string& public_url) {
  if (!public_url.empty()) {
    auto url = public_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
  }
  auto base = s3_bucket_url(bucket.settings(), bucket.location());
  if (!bucket.location().prefix.empty()) base += "/" + s3_uri_encode(bucket.location().prefix, true);
  return base + "/simple";
}

}  // namespace archbuild
