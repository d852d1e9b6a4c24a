#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace archbuild {

// The switches a project reads to compile instead of downloading a prebuilt
// binary: `<NAME>_FORCE_BUILD` names (flash-attn, causal-conv1d, mamba and
// their kind) and FORCE_CUDA, as its setup.py spells them. No regex: the
// text is the project's, of any size.
std::vector<std::string> force_build_switches(std::string_view setup_py);

// For a failed build whose log shows it tried to reach the network (name
// resolution, unreachable hosts, pip finding no index): one message saying
// that the build step is offline by design and what the project probably
// needs, naming its force-build switch when setup.py has one. Empty when
// the log shows no network failure.
std::string network_failure_hint(std::string_view log_text, std::string_view setup_py);

}  // namespace archbuild
