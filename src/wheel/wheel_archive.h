#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace archbuild {

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

}  // namespace archbuild
