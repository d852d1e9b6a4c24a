#include "cache/store_maintenance.h"

#include <algorithm>
#include <map>
#include <set>

#include "cache/cache_index.h"
#include "cache/index_link.h"
#include "cache/provenance.h"
#include "cache/simple_index.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {

// Index pages archbuild writes are a few hundred bytes per wheel.
constexpr uint64_t kMaxPageBytes = 16ull << 20;
// Problems reported per page before the rest are only counted.
constexpr size_t kMaxPageProblems = 20;

// A long or binary value shortened for a message.
std::string shown(std::string_view text) {
  constexpr size_t kShown = 80;
  std::string out;
  for (char c : text.substr(0, kShown)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (text.size() > kShown) out += "... (" + std::to_string(text.size()) + " characters)";
  return out;
}

}  // namespace

std::vector<std::string> wheel_digest_problems(const StoreEntry& entry) {
  if (!entry.manifest) return {"manifest.json is missing or not JSON"};
  std::vector<std::string> problems;
  std::map<std::string, std::string> recorded;
  for (const auto& wheel : entry.manifest->wheels) recorded[wheel.file] = wheel.sha256;
  for (const auto& wheel : entry.wheels) {
    auto name = wheel.filename().string();
    std::string digest;
    if (auto why = hash_regular_file(wheel, digest); !why.empty()) {
      problems.push_back(name + " " + why);
      continue;
    }
    auto it = recorded.find(name);
    if (it == recorded.end()) {
      problems.push_back(name + ": not listed in manifest.json");
    } else if (digest != it->second) {
      problems.push_back(name + ": sha256 differs from the manifest's (changed after publishing)");
    }
  }
  std::error_code ec;
  for (const auto& [name, hash] : recorded)
    if (!std::filesystem::exists(entry.dir / "wheels" / name, ec))
      problems.push_back(name + ": in manifest.json but missing");
  return problems;
}

std::vector<std::string> verify_store_entry(const StoreEntry& entry) {
  std::vector<std::string> problems;
  if (sha256_hex(entry.key_text) != entry.hash)
    problems.push_back("key.txt does not hash to the entry's name (edited?)");
  if (entry.manifest && entry.wheels.empty()) problems.push_back("no wheel in wheels/");
  for (const auto& path : entry.foreign)
    problems.push_back(path.parent_path().filename().string() + "/" + path.filename().string() +
                       " is not a file archbuild wrote (a symbolic link, a directory or a special file)");
  auto digests = wheel_digest_problems(entry);
  problems.insert(problems.end(), digests.begin(), digests.end());
  if (!entry.manifest) return problems;
  std::error_code ec;
  for (const auto& wheel : entry.wheels) {
    if (!std::filesystem::is_regular_file(wheel, ec)) continue;  // named above; a FIFO would block the unzip
    try {
      for (const auto& error : verify_record(wheel).errors)
        problems.push_back(wheel.filename().string() + ": " + error);
    } catch (const UserError& e) {
      problems.push_back(wheel.filename().string() + ": " + e.what());
    }
  }
  return problems;
}

std::vector<std::string> entry_provenance_problems(const StoreEntry& entry, const std::vector<Ed25519Key>& trusted,
                                                   bool require_signature) {
  // The wheels as they are: the manifest's digest where it lists one (verify_store_entry
  // checks the file against it), the file's own where it does not; a wheel gone is absent.
  std::map<std::string, std::string> digests, recorded;
  if (entry.manifest)
    for (const auto& wheel : entry.manifest->wheels) recorded[wheel.file] = wheel.sha256;
  for (const auto& wheel : entry.wheels) {
    const auto name = wheel.filename().string();
    if (auto it = recorded.find(name); it != recorded.end() && !it->second.empty())
      digests[name] = it->second;
    else if (std::string digest; hash_regular_file(wheel, digest).empty())
      digests[name] = digest;
  }
  std::string manifest;
  if (read_regular_file(entry.dir / "manifest.json", kMaxManifestBytes, manifest).empty())
    digests["manifest.json"] = sha256_hex(manifest);
  // The variant wheels, their variant.json (what the index's variants
  // document is made of) and the SBOM are subjects too: a changed one is caught here.
  for (const auto& variant : entry.variants)
    for (const auto& file : {variant, std::filesystem::path(variant.string() + ".json")}) {
      std::string digest;
      if (hash_regular_file(file, digest).empty()) digests[file.filename().string()] = digest;
    }
  if (std::string digest; hash_regular_file(entry.dir / kSbomFile, digest).empty()) digests[kSbomFile] = digest;
  std::error_code ec;
  // A trusted key vouches only for what a statement names: an entry whose
  // statement is gone cannot be checked, so it is a problem, as unsigned is.
  if (!trusted.empty() && !std::filesystem::exists(std::filesystem::symlink_status(entry.dir / kProvenanceFile, ec)))
    return {std::string(kProvenanceFile) + ": missing, so nothing of the entry can be checked against a trusted key"};
  return provenance_problems(entry.dir, digests, trusted, require_signature);
}

uintmax_t entry_wheel_bytes(const StoreEntry& entry) {
  uintmax_t total = 0;
  for (const auto& wheel : entry.wheels) {
    std::error_code ec;
    auto bytes = std::filesystem::file_size(wheel, ec);
    if (!ec) total += bytes;  // on error file_size returns -1, not 0
  }
  return total;
}

std::vector<IndexLink> index_page_links(std::string_view page) {
  std::vector<IndexLink> links;
  constexpr std::string_view kHref = "href=\"";
  size_t at = 0;
  while ((at = page.find(kHref, at)) != std::string_view::npos) {
    at += kHref.size();
    size_t end = page.find('"', at);
    if (end == std::string_view::npos) break;
    auto value = page.substr(at, end - at);
    at = end + 1;
    auto hash = value.find('#');
    if (hash == std::string_view::npos) continue;  // not a wheel link
    auto fragment = value.substr(hash + 1);
    if (!fragment.starts_with("sha256=")) continue;
    links.push_back({std::string(value.substr(0, hash)), std::string(fragment.substr(7))});
  }
  return links;
}

namespace {

// What the store recorded for each file the index may serve: a wheel's
// sha256 from its manifest, a variant wheel's from the store's copy (its
// provenance vouches for that). A page and a wheels/ file changed together
// still differ from these.
struct StoreRecords {
  std::set<std::string> published;            // the store's wheel file names
  std::map<std::string, std::string> newest;  // file name -> the digest of the newest entry's copy
  // Every digest any entry records for a file name: two builds of one
  // version (two refs) publish one file name, and an index one entry behind
  // (a kill before its refresh) still serves the older entry's copy.
  std::map<std::string, std::set<std::string>> by_any;
  std::vector<std::filesystem::path> variant_wheels;        // the newest copy of each name
  std::vector<std::filesystem::path> aside_variant_wheels;  // those of entries set aside

  // `aside`: an entry a rebuild replaced or a gc removed, not deleted yet
  // (a kill before the index refresh): its copies count only in by_any.
  void add(const StoreEntry& entry, bool aside = false) {
    const auto record = [&](const std::string& name, const std::string& digest) {
      if (!aside) newest.emplace(name, digest);  // entries come newest first: the first one wins
      by_any[name].insert(digest);
    };
    if (!aside)
      for (const auto& wheel : entry.wheels) published.insert(wheel.filename().string());
    if (entry.manifest)
      for (const auto& wheel : entry.manifest->wheels)
        if (!wheel.sha256.empty()) record(wheel.file, wheel.sha256);
    for (const auto& wheel : entry.wheels) {  // a manifest without digests: the store's file is the record
      const auto name = wheel.filename().string();
      bool has_digest = entry.manifest &&
                        std::any_of(entry.manifest->wheels.begin(), entry.manifest->wheels.end(),
                                    [&](const auto& w) { return w.file == name && !w.sha256.empty(); });
      if (std::string digest; !has_digest && hash_regular_file(wheel, digest).empty()) record(name, digest);
    }
    for (const auto& variant : entry.variants) {
      std::string digest;
      if (!hash_regular_file(variant, digest).empty()) continue;
      // the newest entry's copy of a file name is the one the index serves, as the refresh picks it
      const bool first = !aside && !newest.count(variant.filename().string());
      record(variant.filename().string(), digest);
      if (first) variant_wheels.push_back(variant);
      if (aside) aside_variant_wheels.push_back(variant);
    }
  }
};

bool is_lower_hex_digest(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(static_cast<unsigned char>(c));
         });
}

// The check of the index's pages, link by link, against the store's records.
class IndexPageCheck {
 public:
  IndexPageCheck(const std::filesystem::path& root, StoreRecords& records) : root_(root), records_(records) {}

  void check_page(const std::filesystem::path& dir, std::vector<std::string>& problems) {
    page_name_ = "simple/" + dir.filename().string() + "/index.html";
    found_.clear();
    more_ = 0;
    std::string body;
    if (auto why = read_regular_file(dir / "index.html", kMaxPageBytes, body); !why.empty()) {
      problems.push_back(page_name_ + " " + why);
      return;
    }
    for (const auto& link : index_page_links(body)) check_link(dir, link);
    problems.insert(problems.end(), found_.begin(), found_.end());
    if (more_) problems.push_back(page_name_ + ": " + std::to_string(more_) + " more problems");
  }

  std::set<std::string> listed;                         // the file names the pages link
  std::map<std::string, std::string> linked_documents;  // variants documents -> the links' sha256

 private:
  void problem(const std::string& text) {  // text goes on from the page's name
    if (found_.size() < kMaxPageProblems)
      found_.push_back(page_name_ + text);
    else
      ++more_;
  }

  // The link's target in the cache, or nullopt (with the problem said) when it names none.
  std::optional<std::filesystem::path> target_of(const std::filesystem::path& dir, const IndexLink& link) {
    if (!is_lower_hex_digest(link.sha256)) {
      problem("a link's sha256 is not 64 hex digits: " + shown(link.sha256));
      return std::nullopt;
    }
    auto decoded = percent_decode(link.href);
    if (!decoded || decoded->empty()) {
      problem(": malformed percent-escape in the link " + shown(link.href));
      return std::nullopt;
    }
    const auto judged = judge_index_link(dir.lexically_relative(root_), *decoded);
    if (judged.verdict == LinkVerdict::not_relative) {
      problem(": the link " + shown(link.href) + " is not relative (archbuild links wheels in the cache)");
      return std::nullopt;
    }
    if (judged.verdict == LinkVerdict::outside) {
      problem(": the link " + shown(link.href) + " points outside the cache");
      return std::nullopt;
    }
    return root_ / judged.path;
  }

  void check_link(const std::filesystem::path& dir, const IndexLink& link) {
    const auto target = target_of(dir, link);
    if (!target) return;
    const auto name = target->filename().string();
    listed.insert(name);
    std::error_code ec;
    if (!std::filesystem::exists(*target, ec)) {
      problem(" links a missing wheel: " + shown(target->string()));
      return;
    }
    auto known = hashed_.find(*target);
    std::string why;
    if (known == hashed_.end()) {
      std::string hex_digest;
      why = hash_regular_file(*target, hex_digest);
      known = hashed_.emplace(*target, why.empty() ? hex_digest : "").first;
    }
    const bool document = name.ends_with("-variants.json");
    if (document) linked_documents[name] = link.sha256;  // checked after the pages
    if (!why.empty() || known->second.empty())
      problem(" links " + shown(target->string()) + ", which " + (why.empty() ? "cannot be read" : why));
    else if (known->second != link.sha256)
      problem(": sha256 of " + name + " differs from the link's");
    else if (!document)
      check_against_store(name, link.sha256);
  }

  void check_against_store(const std::string& name, const std::string& digest) {
    const auto stored = records_.newest.find(name);
    const bool recorded = records_.by_any[name].count(digest) > 0;
    if (stored == records_.newest.end() && recorded)
      problem(" links " + name +
              " of an entry `cache gc` removed, still in the index (run `archbuild cache gc` to "
              "rebuild it)");
    else if (stored == records_.newest.end())
      problem(" links " + name + ", which no store entry publishes");
    else if (stored->second != digest && recorded)
      problem(": " + name +
              " is an older entry's copy; the newest entry's is published but not in the index (run `archbuild "
              "cache gc` to rebuild it)");
    else if (stored->second != digest)
      problem(": " + name +
              " and its link's sha256 differ from what the store recorded (both changed after publishing)");
  }

  const std::filesystem::path& root_;
  StoreRecords& records_;
  std::map<std::filesystem::path, std::string> hashed_;  // a page naming one wheel many times hashes it once
  std::string page_name_;
  std::vector<std::string> found_;
  size_t more_ = 0;
};

// The variants documents say what the store's variant.json files of the
// variant wheels the pages list say, and nothing else (an entry the index
// does not list yet, after a kill mid-publish, is a missing listing, not an edit).
void check_variants_documents(const CacheIndex& index, const StoreRecords& records, const IndexPageCheck& pages,
                              std::vector<std::string>& problems) {
  std::vector<std::filesystem::path> listed_variants;
  for (const auto& variant : records.variant_wheels)
    if (pages.listed.count(variant.filename().string())) listed_variants.push_back(variant);
  const auto documents = variants_documents(listed_variants);
  // Two ways the index is behind, not edited. A push or publish stopped
  // between the variants document and the pages leaves a document (or its
  // link) that already names the published variant wheels the pages do not
  // list yet. A run killed before the refresh after it replaced or removed
  // an entry (set aside until then) leaves the documents of that entry's
  // variant wheels. Each unlisted or stale wheel has its own line.
  std::map<std::string, std::set<std::string>> behind;  // document -> the sha256 of each text it may lag at
  const auto may_lag_at = [&](const std::vector<std::filesystem::path>& variant_wheels) {
    for (const auto& [file, text] : variants_documents(variant_wheels)) behind[file].insert(sha256_hex(text));
  };
  if (listed_variants.size() < records.variant_wheels.size()) may_lag_at(records.variant_wheels);
  if (!records.aside_variant_wheels.empty()) {
    std::map<std::string, std::filesystem::path> served;  // each listed name, an aside copy first
    for (const auto& variant : listed_variants) served[variant.filename().string()] = variant;
    for (const auto& variant : records.aside_variant_wheels)
      if (pages.listed.count(variant.filename().string())) served[variant.filename().string()] = variant;
    std::vector<std::filesystem::path> paths;
    for (const auto& [name, path] : served) paths.push_back(path);
    may_lag_at(paths);
  }
  auto is_behind = [&](const std::string& file, const std::string& digest) {
    auto found = behind.find(file);
    return found != behind.end() && found->second.count(digest) > 0;
  };
  const std::string behind_line =
      " is behind the store's variant wheels, as a publish, push or gc cut off before the index refresh leaves it "
      "(run `archbuild cache gc` to rebuild it)";
  for (const auto& [file, expected] : documents) {
    std::string served;
    if (auto why = read_regular_file(index.wheels_dir / file, 16u << 20, served); !why.empty())
      problems.push_back("wheels/" + file + " " + why);
    else if (served != expected && is_behind(file, sha256_hex(served)))
      problems.push_back("wheels/" + file + behind_line);
    else if (served != expected)
      problems.push_back("wheels/" + file +
                         " differs from what the store's variant wheels say (edited? `archbuild cache gc` rewrites "
                         "it)");
    auto link = pages.linked_documents.find(file);
    if (link == pages.linked_documents.end() || link->second == sha256_hex(expected)) continue;
    if (is_behind(file, link->second))
      problems.push_back("the link to " + file + behind_line);
    else
      problems.push_back("the link to " + file + " has a sha256 other than the store's variant wheels give");
  }
  for (const auto& [file, digest] : pages.linked_documents)
    if (documents.count(file))
      continue;
    else if (is_behind(file, digest))
      problems.push_back("the link to " + file + behind_line);
    else
      problems.push_back("the index links " + file + ", which no listed variant wheel makes");
}

}  // namespace

std::vector<std::string> verify_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store) {
  std::vector<std::string> problems;
  const auto index = cache_index_paths(cache_dir);
  StoreRecords records;
  for (const auto& entry : store.entries()) records.add(entry);
  for (const auto& entry : store.set_aside()) records.add(entry, true);
  auto root = cache_dir.lexically_normal();
  if (!root.has_filename()) root = root.parent_path();  // "cache/"
  IndexPageCheck pages(root, records);
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator(index.simple_dir, ec))
    if (dir.is_directory(ec)) pages.check_page(dir.path(), problems);
  for (const auto& name : records.published)
    if (!pages.listed.count(name))
      problems.push_back(name + ": published but not in the index (run `archbuild cache gc` to rebuild it)");
  check_variants_documents(index, records, pages, problems);
  return problems;
}

std::vector<std::string> push_problems(const StoreEntry& entry) {
  auto problems = verify_store_entry(entry);
  for (auto& problem : entry_provenance_problems(entry, {}, false)) problems.push_back(std::move(problem));
  for (auto& problem : problems) problem = entry.hash + ": " + problem + " (in " + entry.dir.string() + ")";
  return problems;
}

std::string gc_group(const StoreEntry& entry) {
  std::set<std::string> projects;
  for (const auto& wheel : entry.wheels)
    if (auto name = WheelName::parse(wheel.filename().string())) projects.insert(normalize_project_name(name->name));
  std::string group;
  for (const auto& project : projects) group += (group.empty() ? "" : ",") + project;
  return group + " " + entry.inputs.arch_list() + " " + entry.inputs.host_machine();
}

std::vector<StoreEntry> entries_to_collect(const std::vector<StoreEntry>& entries, size_t keep) {
  std::map<std::string, size_t> kept;
  std::vector<StoreEntry> doomed;
  for (const auto& entry : entries)
    if (++kept[gc_group(entry)] > keep) doomed.push_back(entry);
  return doomed;
}

GcResult collect_garbage(const std::filesystem::path& cache_dir, size_t keep, bool dry_run,
                         const std::function<void(const GcStep&)>& on_step) {
  WheelStore store(cache_dir);
  GcResult result;
  auto doomed = entries_to_collect(store.entries(), keep);
  result.leftovers = store.leftovers();
  // What a `cache verify s3://` killed mid-download left (downloads of a
  // bucket's entries, up to their wheels' size each).
  for (auto& path : dead_temporaries(cache_dir, std::string(CacheLayout::kTemporaryPrefix) + "verify"))
    result.leftovers.push_back(std::move(path));
  // Deleted only after the index refresh: until then its wheels may be the index's links.
  std::vector<std::filesystem::path> set_aside;
  for (auto& entry : doomed) {
    GcStep step{std::move(entry), 0, true};
    step.bytes = entry_wheel_bytes(step.entry);
    // Another gc at once removes some of the same entries: each goes once, the other run skips it.
    if (!dry_run) {
      auto aside = store.set_aside_if_unchanged(step.entry);
      step.removed = aside.has_value();
      if (aside) set_aside.push_back(std::move(*aside));
    }
    if (step.removed) result.freed_bytes += step.bytes;
    if (on_step) on_step(step);
    result.steps.push_back(std::move(step));
  }
  if (!dry_run) {
    const auto remove = [](const std::filesystem::path& path) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);  // gone already when another gc removed it first
      if (ec && std::filesystem::exists(std::filesystem::symlink_status(path)))
        fail_environment("cannot remove the unfinished publish " + path.string() + ": " + ec.message());
    };
    // Entries a killed run set aside may still be the index's links: they go after the refresh.
    for (const auto& path : result.leftovers)
      if (is_set_aside_name(path.filename().string()))
        set_aside.push_back(path);
      else
        remove(path);
    refresh_cache_index(cache_dir, store);
    for (const auto& path : set_aside) remove(path);
  }
  return result;
}

}  // namespace archbuild
