#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "cache/simple_index.h"
#include "remote/s3_client.h"

namespace archbuild {

// A project page's links: file name -> link (href relative to the page).
using S3PageLinks = std::map<std::string, PageLink>;

S3PageLinks parse_s3_page(const std::string& page);

// The normalized project whose page links a wheel file; "" for a name that
// is no wheel's.
std::string s3_wheel_project(const std::string& file_name);

// One project page, read and rewritten with If-Match on what was read until
// no other writer came between: `change` edits the links and may read other
// objects; it runs again on every retry. Returns the links the page holds
// afterwards. One that another writer keeps beating ends the job (exit 3).
S3PageLinks update_s3_page(S3Client& bucket, const std::string& project,
                           const std::function<void(S3PageLinks&)>& change);

// The root page gains projects (read and rewritten as update_s3_page does);
// returns the projects it lists afterwards.
std::set<std::string> add_to_s3_root_page(S3Client& bucket, const std::set<std::string>& projects);

// The variants documents linked on a page follow the variant wheels it
// links: each keeps the labels of the variant wheels still linked for its
// version (a document left with none is unlinked), and each link carries
// the sha256 of the document as it is now. `added_documents` (file name ->
// text) are documents to merge in.
void settle_s3_variants_documents(S3Client& bucket, const std::string& project, S3PageLinks& links,
                                  const std::map<std::string, std::string>& added_documents);

// The pages as a push last read or wrote them: each read once, so finding
// an entry already listed costs no page request of its own.
struct S3PagesSeen {
  std::map<std::string, S3PageLinks> projects;
  std::optional<std::set<std::string>> root;
  std::map<std::string, std::optional<std::string>> documents;  // simple/PROJECT/...-variants.json -> its text

  // Each read on first use; an absent one reads as empty.
  const S3PageLinks& project(S3Client& bucket, const std::string& name);
  const std::optional<std::string>& document(S3Client& bucket, const std::string& path);
  const std::set<std::string>& root_page(S3Client& bucket);
};

}  // namespace archbuild
