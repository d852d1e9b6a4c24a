#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

// The compiler launcher the user chose (the compiler_launcher setting): what
// runs in front of each compile, after archbuild's own step launcher.
enum class CompilerLauncher { none, ccache, sccache };

// "none", "ccache", "sccache"; nullopt for anything else.
std::optional<CompilerLauncher> parse_compiler_launcher(std::string_view word);
// The program it runs ("ccache", "sccache"); "" for none.
std::string launcher_program(CompilerLauncher launcher);

}  // namespace archbuild
