#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/cache_key.h"
#include "cache/cache_push.h"
#include "cache/cache_verify.h"
#include "cache/store_maintenance.h"
#include "core/exit_code.h"

namespace archbuild {

// What the `cache` subcommands report of their results under --json, and
// the exit code each result means; the terminal's lines are the CLI's.

// `cache verify --json`: ok, the counts, each entry's problems by key, the
// index's problems and the unfinished publishes.
nlohmann::json verify_result_json(const LocalVerifyResult& result);
// 0 when every entry and the index check out, else 1.
ExitCode verify_exit_code(const LocalVerifyResult& result);

// The entries a gc removed (or, dry run, would remove), as store_entry_json
// with the bytes their wheels had; the entries another gc or a build took
// first are left out.
nlohmann::json gc_removed_json(const GcResult& result);
// `cache gc --json`, with the interrupted sdist downloads it removed too.
nlohmann::json gc_result_json(const GcResult& result, size_t keep, bool dry_run,
                              const std::vector<std::string>& stale_downloads);

// What `cache push DIR --json` adds to the push's outcome: the destination,
// its index dir and how many wheels that index lists.
nlohmann::json pushed_index_json(const PushResult& result, const std::filesystem::path& dest);

// `cache why --json`: whether the keys are the same, and each difference.
nlohmann::json key_differences_json(const std::vector<KeyDifference>& differences);
// 0 when the keys are the same, else 1.
ExitCode key_differences_exit_code(const std::vector<KeyDifference>& differences);

}  // namespace archbuild
