#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "cache/wheel_store.h"
#include "remote/s3_client.h"
#include "remote/s3_pages.h"

namespace archbuild {

// Lists a whole entry of the bucket on its projects' pages (the caller
// holds its lock and has seen its key.txt there), and its projects on the
// root page; `seen` is updated to the pages written. The links carry the
// digests of the bucket's objects, which are what readers download.
// Returns the number of wheels linked.
size_t list_s3_entry(S3Client& bucket, const std::string& hash, S3PagesSeen& seen);

// File name -> the newest source entry holding it: the entry a page links
// that name to after a push, as in the local index.
using S3NewestHolders = std::map<std::string, std::string>;

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
struct S3EntryLeftAsItIs {
  size_t links = 0;
  std::set<std::string> relies_on;  // newer source entries the page links a shared file name to
};

std::optional<S3EntryLeftAsItIs> s3_entry_listed_unchanged(S3Client& bucket, const StoreEntry& entry,
                                                           const S3NewestHolders& newest, S3PagesSeen& seen);

}  // namespace archbuild
