#pragma once

#include <string>

namespace archbuild {

// The path that runs archbuild's own binary again, for the children that are
// archbuild (step launcher, fatbin loader, matrix cells). When the binary is
// replaced while archbuild runs (an upgrade, a re-deploy), /proc/self/exe
// reads "PATH (deleted)"; /proc/PID/exe still runs this process's image for
// as long as it lives.
std::string self_executable();

// The rule above, given the link's text and this process's id.
std::string self_executable_from(const std::string& link_text, long pid);

}  // namespace archbuild
