#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace archbuild {

// What a project's setup.py reads to change what it builds, found by name in
// its text (no regex: the text is the project's, of any size).

// The switches that make it compile instead of downloading a prebuilt
// binary: `<NAME>_FORCE_BUILD` names (flash-attn, causal-conv1d, mamba and
// their kind) and FORCE_CUDA.
std::vector<std::string> force_build_switches(std::string_view setup_py);

// The switches that make it build its CUDA code without a visible GPU:
// FORCE_CUDA (PyG-style packages), WITH_CUDA, and `<NAME>_FORCE_CUDA` /
// `<NAME>_WITH_CUDA` spellings.
std::vector<std::string> cuda_build_switches(std::string_view setup_py);

// For a failed build whose log shows it tried to reach the network (name
// resolution, unreachable hosts, pip finding no index): one message saying
// that the build step is offline by design and what the project probably
// needs, naming its force-build switch when setup.py has one. Empty when
// the log shows no network failure.
std::string network_failure_hint(std::string_view log_text, std::string_view setup_py);

// What decides whether a setup.py builds its CUDA extension, as
// recipes/frontends/extension_gates.py reads its syntax tree: the
// environment lookups of the branches around each CUDA extension it
// constructs, outermost (the gate) first, with the value they compare to.
struct ExtensionGate {
  std::string name;
  std::string value;   // "" when the condition compares to nothing ("1" is proposed)
  bool unset = false;  // the condition needs it off (`if not BUILD_NO_CUDA`)
};
struct ExtensionGates {
  bool read = false;      // the script ran and answered
  size_t extensions = 0;  // CUDA extensions found: 0 means nothing can be told
  std::vector<ExtensionGate> gates;
  bool gpu_query = false;  // a condition asks torch for a GPU (torch.cuda.is_available())
};

// Set in a build step's environment, torch.cuda answers as one GPU of this
// compute capability would (recipes/frontends/gpu_view): for a setup.py that
// builds its CUDA code only when torch sees a GPU.
inline constexpr const char* kStepGpuVariable = "ARCHBUILD_STEP_GPU_CC";

// One environment variable set to a value ("FORCE_CUDA", "1").
struct EnvSwitch {
  std::string name;
  std::string value;
  bool operator==(const EnvSwitch&) const = default;
};

// What archbuild may do about a CPU-only result: `set`, the gates to set,
// outermost first (each that asks for a variable to be set, to its value or
// "1"); `kept_off`, those never set: the condition needs them off (`if not
// BUILD_NO_CUDA`), or their name reads as turning CUDA off (NO_CUDA,
// DISABLE, CPU, WITHOUT). A build that has one of those set asked for the
// CPU variant. Variables archbuild sets itself for every build
// (TORCH_CUDA_ARCH_LIST, CUDA_HOME, ...) are neither: they hold already;
// nor is a project's own arch variable (NATTEN_CUDA_ARCH) that a condition
// only asks to be set: its value would be an arch list in its own spelling.
struct CudaSwitches {
  std::vector<EnvSwitch> set;
  std::vector<std::string> kept_off;
  bool gpu_query = false;  // no switch may do it, but torch answering as a GPU would (kStepGpuVariable)
  bool operator==(const CudaSwitches&) const = default;
};
CudaSwitches settable_cuda_switches(const ExtensionGates& gates);

// For a wheel with no CUDA code although CUDA targets were asked: the
// project most likely built its CPU-only variant because no GPU was visible
// at build time. Names the environment lookups that gate its CUDA
// extension (`gates`), most likely first, and how to set them; or, when
// they cannot be told, the switches its setup.py reads by name.
std::string cpu_only_build_hint(std::string_view setup_py, const ExtensionGates& gates = {});

}  // namespace archbuild
