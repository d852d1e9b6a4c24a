#include "remote/s3_verify.h"

#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "cache/index_link.h"
#include "cache/provenance.h"
#include "cache/simple_index.h"
#include "cache/store_maintenance.h"
#include "cache/wheel_store.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "remote/s3_bucket_layout.h"
#include "remote/s3_cache_marker.h"
#include "remote/s3_pages.h"
#include "wheel/wheel_variant.h"

namespace archbuild {

namespace {

// What an entry's path inside store/KEY/ may be: what archbuild writes there.
bool expected_s3_entry_file(const std::string& inside) {
  if (inside.find("..") != std::string::npos || inside.empty() || inside[0] == '/') return false;
  if (inside == kS3KeyFile || inside == kS3ManifestFile || inside == kProvenanceFile || inside == kSbomFile)
    return true;
  for (const char* dir : {"wheels/", "variants/"})
    if (inside.rfind(dir, 0) == 0 && inside.find('/', std::string_view(dir).size()) == std::string::npos &&
        inside.size() > std::string_view(dir).size())
      return true;
  return false;
}

// What the store's entries publish, as downloaded: what the pages may link.
struct S3PublishedObjects {
  std::map<std::string, std::string> digests;  // object path -> sha256 of what was downloaded
  std::set<std::string> wheel_names;           // every entry's wheel file names
  // {name}-{version}-variants.json -> the variant.json files of the entries'
  // variant wheels, merged: what a served variants document may claim.
  std::map<std::string, nlohmann::json> vouched_variants;
};

// A page link's target: an object a store entry publishes, or a document
// beside the pages (read from the bucket).
struct S3LinkedObject {
  std::string digest;
  std::optional<RemoteText> document;
};

// One run of verify_s3: the entries first, then the pages, which are
// checked against what the entries publish.
class S3BucketVerifier {
 public:
  S3BucketVerifier(S3Client& bucket, const std::filesystem::path& scratch, const std::vector<Ed25519Key>& trusted,
                   bool require_signature)
      : bucket_(bucket), scratch_(scratch), trusted_(trusted), require_signature_(require_signature) {}

  void verify_entries();
  void verify_pages();
  S3VerifyResult result;

 private:
  void download_entry(const std::string& hash, const S3BucketEntry& listed, const std::filesystem::path& dir);
  void check_downloaded_entry(const std::string& hash);
  void vouch_variants(const StoreEntry& entry);
  void verify_page(const std::string& page_path, std::set<std::string>& linked_names);
  bool verify_link(const std::string& page_path, const std::string& file, const PageLink& link);
  std::optional<S3LinkedObject> linked_object(const std::string& page_path, const std::string& file,
                                              const std::string& target);
  bool forged_variants_document(const std::string& target, const std::string& text, const std::string& file);

  S3Client& bucket_;
  const std::filesystem::path& scratch_;
  const std::vector<Ed25519Key>& trusted_;
  bool require_signature_;
  S3PublishedObjects published_;
};

// Each finished entry is downloaded into the scratch dir, checked, and removed.
void S3BucketVerifier::verify_entries() {
  std::vector<std::string> odd;
  auto entries = list_s3_entries(bucket_, &odd);
  for (const auto& key : odd)
    result.problems.push_back(key + ": not an object archbuild writes in store/ (left alone)");
  for (const auto& [hash, listed] : entries) {
    if (!listed.key_file) {
      result.unfinished.push_back(hash);
      continue;
    }
    ++result.entries;
    const auto dir = scratch_ / "store" / hash;
    std::filesystem::remove_all(dir);
    download_entry(hash, listed, dir);
    check_downloaded_entry(hash);
    std::filesystem::remove_all(dir);
  }
}

void S3BucketVerifier::download_entry(const std::string& hash, const S3BucketEntry& listed,
                                      const std::filesystem::path& dir) {
  for (const auto& object : listed.objects) {
    const auto inside = object.path.substr(s3_entry_path(hash).size());
    if (!expected_s3_entry_file(inside)) {
      result.problems.push_back(hash + ": " + object.path + " is not a file archbuild writes in an entry");
      continue;
    }
    std::filesystem::create_directories((dir / inside).parent_path());
    // No more than the listing said: an object that grows without end
    // while it is read stops there, a problem of this entry.
    try {
      if (!bucket_.get_file(object.path, dir / inside, object.size)) {
        result.problems.push_back(hash + ": " + object.path + " was listed but is gone");
        continue;
      }
    } catch (const UserError& error) {
      if (error.code() != ExitCode::bad_input) throw;
      result.problems.push_back(hash + ": " + error.what());
      continue;
    }
    published_.digests[object.path] = local_file_sha256(dir / inside);
  }
}

// As `cache verify` checks a local entry, read from the scratch dir's store.
void S3BucketVerifier::check_downloaded_entry(const std::string& hash) {
  WheelStore store(scratch_);
  std::optional<StoreEntry> entry;
  for (auto& candidate : store.entries())
    if (candidate.hash == hash) entry = std::move(candidate);
  if (!entry) {
    result.problems.push_back(hash + ": not readable as an entry");
    return;
  }
  for (const auto& wheel : entry->wheels) published_.wheel_names.insert(wheel.filename().string());
  vouch_variants(*entry);
  auto problems = verify_store_entry(*entry);
  for (auto& problem : entry_provenance_problems(*entry, trusted_, require_signature_))
    problems.push_back(std::move(problem));
  for (const auto& problem : problems) result.problems.push_back(hash + ": " + problem);
}

void S3BucketVerifier::vouch_variants(const StoreEntry& entry) {
  for (const auto& variant : entry.variants) {
    std::string text;
    if (!read_regular_file(variant.string() + ".json", 1 << 20, text).empty()) continue;
    auto document = nlohmann::json::parse(text, nullptr, false);
    if (!document.is_object() || !document["variants"].is_object()) continue;
    for (const auto& [label, properties] : document["variants"].items())
      published_.vouched_variants[variants_index_file_name(variant.filename().string())][label] = properties;
  }
}

// Every project page's links; then the entries' wheels that no page links.
void S3BucketVerifier::verify_pages() {
  std::set<std::string> linked_names;
  for (const auto& object : bucket_.list("simple/")) {
    if (!object.path.ends_with("/index.html") || object.path == kS3RootPage) continue;
    verify_page(object.path, linked_names);
  }
  for (const auto& name : published_.wheel_names)
    if (!linked_names.count(name)) result.unlisted.push_back(name);
}

void S3BucketVerifier::verify_page(const std::string& page_path, std::set<std::string>& linked_names) {
  auto page = bucket_.get_text(page_path, kMaxS3PageBytes);
  if (!page) return;
  for (const auto& [file, link] : parse_s3_page(page->text))
    if (verify_link(page_path, file, link)) linked_names.insert(file);
}

// False when the link names nothing the cache serves (a problem); true when
// it does, whatever its digest says (a mismatch is a problem or a stale link).
bool S3BucketVerifier::verify_link(const std::string& page_path, const std::string& file, const PageLink& link) {
  // hrefs are relative to simple/PROJECT/: ../../store/... or a document beside the page.
  const auto project_dir = page_path.substr(0, page_path.size() - std::string_view("index.html").size());
  const auto judged = judge_index_link(project_dir, link.href);
  if (judged.verdict != LinkVerdict::inside) {
    result.problems.push_back(page_path + ": link " + link.href + " leaves the cache");
    return false;
  }
  const std::string target = judged.path.string();
  auto linked = linked_object(page_path, file, target);
  if (!linked) return false;
  const bool variants_document = linked->document && file.ends_with(kVariantsSuffix);
  const bool forged = variants_document && forged_variants_document(target, linked->document->text, file);
  // The document and the page linking it are two writes: a push killed
  // between them leaves a document that claims only vouched variants
  // under a link with its former digest, which the next push relinks.
  if (linked->digest != link.sha256) {
    if (variants_document && !forged)
      result.stale_links.push_back(target);
    else
      result.problems.push_back(page_path + ": the link to " + target + " says sha256 " + link.sha256 +
                                ", the object is " + linked->digest);
  }
  return true;
}

std::optional<S3LinkedObject> S3BucketVerifier::linked_object(const std::string& page_path, const std::string& file,
                                                              const std::string& target) {
  // A wheel is served from a store entry, whose manifest and provenance
  // vouch for it; one anywhere else is nobody's, whatever its digest.
  if (file.ends_with(".whl") && !published_.digests.count(target)) {
    result.problems.push_back(page_path + ": links " + target + ", a wheel which no store entry publishes");
    return std::nullopt;
  }
  if (auto known = published_.digests.find(target); known != published_.digests.end())
    return S3LinkedObject{known->second, std::nullopt};
  if (target.rfind("simple/", 0) == 0 && is_plain_s3_key(target))
    if (auto document = bucket_.get_text(target, kMaxS3PageBytes))
      return S3LinkedObject{sha256_hex(document->text), std::move(document)};
  result.problems.push_back(page_path + ": links " + target + ", which is not there");
  return std::nullopt;
}

// A variants document claims only what the store's variant wheels say.
bool S3BucketVerifier::forged_variants_document(const std::string& target, const std::string& text,
                                                const std::string& file) {
  auto served = nlohmann::json::parse(text, nullptr, false);
  const auto& vouched = published_.vouched_variants[file];
  if (!served.is_object() || !served["variants"].is_object()) {
    result.problems.push_back(target + ": not a variants document");
    return true;
  }
  bool forged = false;
  for (const auto& [label, properties] : served["variants"].items())
    if (!vouched.contains(label) || vouched.at(label) != properties) {
      result.problems.push_back(target + ": claims the variant " + printable(label) +
                                ", which no store entry's variant wheel says");
      forged = true;
    }
  return forged;
}

}  // namespace

S3VerifyResult verify_s3(S3Client& bucket, const std::filesystem::path& scratch, const std::vector<Ed25519Key>& trusted,
                         bool require_signature) {
  require_s3_cache_marker(bucket);
  S3BucketVerifier verifier(bucket, scratch, trusted, require_signature);
  verifier.verify_entries();
  verifier.verify_pages();
  return std::move(verifier.result);
}

}  // namespace archbuild
