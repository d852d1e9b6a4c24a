#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace archbuild {

std::string sha256_hex(std::string_view data);
// Throws UserError(bad_input) when the file cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace archbuild
