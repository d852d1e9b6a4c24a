// Simple-index pages: entry points the libFuzzer target fuzz_index_page drives,
// shared with the unit test that replays tests/fuzz/corpus/<target>/ in CI
// (tests/unit/fuzz/fuzz_corpus_test.cpp), so a corpus input runs through
// exactly the code it was found with. The parsers may refuse an input only with
// UserError (exit 2 or 3), which the entry point catches; any other exception,
// a crash or a sanitizer report is a finding.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <span>
#include <string>

#include "cache/simple_index.h"
#include "cache/store_maintenance.h"
#include "cache/wheel_store.h"
#include "core/error.h"
#include "core/strings.h"
#include "fuzz_support.h"

namespace archbuild::fuzz {

// A cache whose one project page is `bytes`, read by both parsers of index
// pages: `cache verify`'s (verify_cache_index: links, escapes, digests, where
// each link points) and the index refresh's record of what it linked
// (linked_wheel_names). The project is the CLI tests' fixture, whose real
// pages are the seeds, and the cache holds a file under one of its wheels'
// names, so a link can name a real target. Made once; only the page changes.
// Returns the links the refresh's parser found.
inline std::set<std::string> read_index_page(std::span<const uint8_t> bytes, const std::filesystem::path& scratch) {
  const auto cache = scratch / "cache";
  const auto simple = cache / "simple";
  if (!std::filesystem::exists(simple / kIndexMarker)) {
    write_bytes(simple / kIndexMarker, "archbuild simple index 1\nproject fixture\n");
    write_bytes(cache / "wheels" / "fixture-1.0+cu130.sm80-py3-none-linux_x86_64.whl", "not a zip");
    std::filesystem::create_directories(cache / "store");
  }
  const auto page = simple / "fixture" / "index.html";
  write_bytes(page, bytes);
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (const auto& link : index_page_links(text)) (void)percent_decode(link.href);
  try {
    (void)verify_cache_index(cache, WheelStore(cache));
  } catch (const UserError&) {
  }
  try {
    return linked_wheel_names(simple);
  } catch (const UserError&) {
    return {};
  }
}

}  // namespace archbuild::fuzz
