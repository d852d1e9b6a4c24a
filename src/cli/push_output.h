#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/cache_push.h"
#include "core/exit_code.h"

namespace archbuild {

// One way to report a push, to a directory or a bucket: the JSON fields, the
// lines per entry, and the exit code (1 when a damaged source entry was kept out).
nlohmann::json push_outcome_json(const PushOutcome& outcome);
// Prints the per-entry lines; returns the counts ("2 pushed, 0 already
// there, ...") for the caller's summary line.
std::string print_push_outcome(const PushOutcome& outcome, const std::filesystem::path& source,
                               const std::string& copied_again);
ExitCode push_exit_code(const PushOutcome& outcome, const std::string& destination);

}  // namespace archbuild
