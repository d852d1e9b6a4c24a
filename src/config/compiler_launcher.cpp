#include "config/compiler_launcher.h"

namespace archbuild {

std::optional<CompilerLauncher> parse_compiler_launcher(std::string_view word) {
  if (word == "none") return CompilerLauncher::none;
  if (word == "ccache") return CompilerLauncher::ccache;
  if (word == "sccache") return CompilerLauncher::sccache;
  return std::nullopt;
}

std::string launcher_program(CompilerLauncher launcher) {
  switch (launcher) {
    case CompilerLauncher::none: return "";
    case CompilerLauncher::ccache: return "ccache";
    case CompilerLauncher::sccache: return "sccache";
  }
  return "";
}

}  // namespace archbuild
