#include "builder/project_switches.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/secrets.h"
#include "core/strings.h"

namespace archbuild {

namespace {

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether the quote at `quote` opens the argument of an environment lookup:
// getenv("X"), environ.get("X"), environ["X"] (not a C macro name in
// define_macros, say).
bool looked_up_in_environment(std::string_view text, size_t quote) {
  size_t end = quote;
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
  const auto before = text.substr(0, end);
  return before.ends_with("getenv(") || before.ends_with("environ.get(") || before.ends_with("environ[") ||
         before.ends_with("env.get(");
}

// Every quoted identifier in `text` ('NAME' or "NAME": how setup.py names
// an environment variable, unlike its own Python variables) equal to one of
// `exact` or ending in one of `suffixes` (with a name before it), in order
// of first appearance.
std::vector<std::string> identifiers_named(std::string_view text, const std::vector<std::string_view>& exact,
                                           const std::vector<std::string_view>& suffixes) {
  std::vector<std::string> found;
  for (size_t at = 0; at < text.size();) {
    if (!identifier_char(text[at])) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() && identifier_char(text[end])) ++end;
    const auto word = text.substr(at, end - at);
    const bool quoted = at > 0 && end < text.size() && (text[at - 1] == '"' || text[at - 1] == '\'') &&
                        text[end] == text[at - 1] && looked_up_in_environment(text, at - 1);
    const bool named = quoted && (std::find(exact.begin(), exact.end(), word) != exact.end() ||
                                  std::any_of(suffixes.begin(), suffixes.end(), [&](std::string_view suffix) {
                                    return word.size() > suffix.size() && word.ends_with(suffix);
                                  }));
    if (named && std::find(found.begin(), found.end(), word) == found.end()) found.emplace_back(word);
    at = end;
  }
  return found;
}

std::string env_settings(const std::vector<std::string>& switches) {
  std::vector<std::string> settings;
  for (const auto& name : switches) settings.push_back("--env " + name + (name.ends_with("_BUILD") ? "=TRUE" : "=1"));
  return join(settings, " ");
}

// Words of a name that turns CUDA off (BUILD_NO_CUDA, FORCE_ONLY_CPU, SKIP_CUDA_BUILD).
constexpr std::array<std::string_view, 7> kTurnsCudaOff = {"no_cuda", "nocuda",  "no_gpu", "disable",
                                                           "cpu",     "without", "skip"};

bool contains_any(std::string_view name, const auto& words) {
  return std::any_of(words.begin(), words.end(), [&](std::string_view word) { return name.find(word) != name.npos; });
}

// A lower-cased gate that no on-switch value fits: what the build environment
// always holds (the arch list, the toolkit), a project's own arch list asked
// only to be set (NATTEN_CUDA_ARCH: "1" is no arch list), or a place, a
// version or a tool (CUDNN_ROOT, CUDA_VERSION, NVCC).
bool never_a_switch(const std::string& name, const std::string& value) {
  static constexpr std::array<std::string_view, 7> set_by_archbuild = {
      "torch_cuda_arch_list", "cuda_home", "cuda_path", "cudacxx", "cudaarchs", "max_jobs", "cmake_cuda_compiler"};
  static constexpr std::array<std::string_view, 7> valued_names = {"nvcc",     "cc",
                                                                   "cxx",      "cuda_visible_devices",
                                                                   "num_gpus", "ld_library_path",
                                                                   "path"};
  static constexpr std::array<std::string_view, 8> valued_suffixes = {"_root",   "_home",    "_path", "_dir",
                                                                      "_prefix", "_version", "_lib",  "_include"};
  const auto is = [&](const auto& names) { return std::find(names.begin(), names.end(), name) != names.end(); };
  return is(set_by_archbuild) || is(valued_names) || (name.find("arch") != name.npos && value.empty()) ||
         std::any_of(valued_suffixes.begin(), valued_suffixes.end(),
                     [&](std::string_view suffix) { return name.ends_with(suffix); });
}

}  // namespace

std::vector<std::string> force_build_switches(std::string_view setup_py) {
  return identifiers_named(setup_py, {"FORCE_CUDA"}, {"_FORCE_BUILD"});
}

std::vector<std::string> cuda_build_switches(std::string_view setup_py) {
  return identifiers_named(setup_py, {"FORCE_CUDA", "WITH_CUDA"}, {"_FORCE_CUDA", "_WITH_CUDA"});
}

std::string network_failure_hint(std::string_view log_text, std::string_view setup_py) {
  static const std::vector<std::string_view> signs = {"Temporary failure in name resolution",
                                                      "Name or service not known",
                                                      "nodename nor servname",
                                                      "Network is unreachable",
                                                      "getaddrinfo failed",
                                                      "Could not resolve host",
                                                      "Failed to establish a new connection",
                                                      "urlopen error",
                                                      "[Errno -3]",
                                                      "[Errno 101]",
                                                      "No matching distribution found",
                                                      "127.0.0.1', port=9",
                                                      "Connection refused"};
  std::string_view sign;
  for (auto candidate : signs)
    if (log_text.find(candidate) != std::string_view::npos) {
      sign = candidate;
      break;
    }
  if (sign.empty()) return {};
  std::string hint = "the build tried to reach the network (its log says \"" + std::string(sign) +
                     "\"), and archbuild builds offline by design: a wheel it labels must be compiled here, not "
                     "downloaded. The project probably fetches a prebuilt binary or a dependency";
  // CMake's ExternalProject and FetchContent say what they could not download: "error: downloading 'URL' failed".
  constexpr std::string_view cmake_download = "error: downloading '";
  if (auto at = log_text.find(cmake_download); at != std::string_view::npos) {
    const auto start = at + cmake_download.size();
    const auto end = log_text.find('\'', start);
    if (end != std::string_view::npos && end - start < 2048) {
      auto url = log_text.substr(start, end - start);
      url = url.substr(0, url.find_first_of("?#"));  // a query may carry a token (?private_token=...)
      hint += " (its CMake build downloads " + secrets::scrub(url) + " with ExternalProject or FetchContent)";
    }
  }
  auto switches = force_build_switches(setup_py);
  if (!switches.empty()) {
    hint += "; its setup.py reads " + join(switches, ", ") + ": build with " + env_settings(switches) +
            " (or set it in the recipe's [build.env])";
  } else {
    hint += "; look for a FORCE_BUILD-style switch in its setup.py, vendor the dependency, or pass --allow-network";
  }
  return hint;
}

CudaSwitches settable_cuda_switches(const ExtensionGates& gates) {
  if (!gates.read || gates.extensions == 0) return {};
  CudaSwitches switches;
  for (const auto& gate : gates.gates) {
    const auto name = to_lower(gate.name);
    if (never_a_switch(name, gate.value)) continue;
    if (gate.unset || contains_any(name, kTurnsCudaOff))
      switches.kept_off.push_back(gate.name);
    else
      switches.set.push_back({gate.name, gate.value.empty() ? "1" : gate.value});
  }
  switches.gpu_query = gates.gpu_query;
  return switches;
}

std::string cpu_only_build_hint(std::string_view setup_py, const ExtensionGates& gates) {
  std::string hint =
      "the project probably built its CPU-only variant because it saw no GPU at build time (archbuild builds "
      "wherever it runs, GPU or not)";
  if (gates.read && gates.extensions > 0 && !gates.gates.empty()) {
    std::vector<std::string> conditions, settings;
    for (const auto& gate : gates.gates) {
      if (gate.unset) {
        conditions.push_back(gate.name + " is not set");
        continue;
      }
      const auto value = gate.value.empty() ? std::string("1") : gate.value;
      conditions.push_back(gate.name + (gate.value.empty() ? " is set" : "=" + gate.value));
      settings.push_back("--env " + gate.name + "=" + value);
    }
    hint += "; its setup.py constructs its CUDA extension only when " + join(conditions, ", then ") +
            " (outermost condition first)";
    if (settings.empty()) return hint + ": check that the build environment does not set them";
    return hint + ": build with " + join(settings, " ") + " (or set them in the recipe's [build.env])";
  }
  if (gates.read && gates.extensions > 0 && gates.gpu_query)
    return hint +
           "; its setup.py builds its CUDA code only when torch sees a GPU (torch.cuda.is_available()), "
           "and the build step never sees one: build with --env " +
           std::string(kStepGpuVariable) +
           "=M.N, the highest compute capability you build for (torch then answers as one GPU of it "
           "would), or on a GPU machine with --env CUDA_VISIBLE_DEVICES=0";
  if (gates.read && gates.extensions == 0)
    hint +=
        "; archbuild cannot tell from its setup.py which switch gates its CUDA code (it constructs no "
        "CUDAExtension and no Extension with .cu sources that archbuild can see)";
  auto switches = cuda_build_switches(setup_py);
  if (switches.empty())
    return hint +
           "; many projects build their CUDA code only when told to (FORCE_CUDA=1 for PyG-style packages): "
           "find the switch in its setup.py and pass it with --env NAME=1 or the recipe's [build.env]; one "
           "that asks only whether torch sees a GPU gets no from the build step, which sees none: --env " +
           std::string(kStepGpuVariable) +
           "=M.N makes torch answer as one GPU of that compute capability would, and on a GPU machine "
           "--env CUDA_VISIBLE_DEVICES=0 shows it one";
  return hint + "; its setup.py reads " + join(switches, ", ") + ": build with " + env_settings(switches) +
         " (or set it in the recipe's [build.env])";
}

}  // namespace archbuild
