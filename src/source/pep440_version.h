#pragma once

#include <cstddef>
#include <string_view>

namespace archbuild {

// The longest version string archbuild accepts: far beyond any real release
// ("2.11.0.post1.dev3+cu130.sm90ptx"), short enough that no input can make
// checking it costly.
inline constexpr size_t kMaxVersionLength = 256;

// Whether `text` is one exact PEP 440 version as pip accepts it, case
// insensitive: [v][N!]N(.N)*[{a|b|c|rc|alpha|beta|pre|preview}[N]][-N|post[N]|rev[N]|r[N]][dev[N]][+local],
// with the separators PEP 440 normalises ('-', '_', '.'). One pass, no
// backtracking beyond a segment, no recursion (std::regex recursed per
// character and overflowed the stack on long inputs).
bool is_pep440_version(std::string_view text);

}  // namespace archbuild
