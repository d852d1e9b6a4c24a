#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

typedef struct zip zip_t;

namespace archbuild {

// A member's bytes; throws UserError(bad_input) naming the member when unreadable.
std::string read_zip_member(zip_t* archive, int64_t index, const std::string& name);
// "torch-2.9.1.dist-info" (the directory holding RECORD), or "" when there is none.
std::string find_dist_info(zip_t* archive);

// PEP 427: {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl
struct WheelName {
  std::string name, version, build, python, abi, platform;
  static std::optional<WheelName> parse(const std::string& filename);
};

struct RecordCheck {
  size_t files_checked = 0;
  std::vector<std::string> errors;  // one line per problem, naming the member
  bool ok() const { return errors.empty(); }
};

// Verifies the wheel's RECORD (PEP 376/427): every member's sha256
// (urlsafe base64, no padding) and size, no member missing from RECORD, no
// RECORD entry missing from the wheel. Reads from the zip, never unpacks.
// Throws UserError(bad_input) when the file is not a readable wheel.
RecordCheck verify_record(const std::filesystem::path& wheel);

// urlsafe base64 without padding, as RECORD writes digests.
std::string record_digest(const std::string& bytes);

// One RECORD row: path,hash,size (CSV; paths with commas are quoted), and back.
std::vector<std::string> record_row(const std::string& line);
std::string record_row_text(const std::vector<std::string>& fields);

// The importable top-level names a wheel installs ("torch", "fixture",
// "_C" for a bare extension module): what a kernel test imports.
std::vector<std::string> wheel_top_level_names(const std::filesystem::path& wheel);

}  // namespace archbuild
