#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace archbuild {

// How the compiler that links an extension links the C++ runtime. torch's
// libraries use the shared libstdc++ (libstdc++.so.6); an extension that
// carries its own static copy has two runtimes in one process, and torch's
// C++ exceptions (every TORCH_CHECK, AT_ERROR) crash it or lose their
// message. A compiler built with only the static libstdc++ in its own lib
// dir links so by default.
struct CxxRuntimeLink {
  std::string compiler;
  bool probed = false;     // a trial link ran and its library was read
  std::string not_probed;  // why not, when it did not
  bool static_by_default = false;
  // What makes it link the shared runtime, added to LDFLAGS; empty when it does so already.
  std::vector<std::string> ldflags;
  std::filesystem::path runtime;  // the shared libstdc++ linked against then
  std::string failure;            // it links statically and nothing archbuild tried changed that

  bool remedied() const { return static_by_default && failure.empty() && !ldflags.empty(); }
  // One line: "g++ links libstdc++ statically; archbuild links the shared
  // one (/usr/lib/x86_64-linux-gnu/libstdc++.so.6) as torch's libraries do".
  std::string summary() const;
};

// The compiler that links an extension, the one to probe: $CXX when set
// (setuptools and CMake link with it), else the host compiler.
inline std::string extension_link_compiler(const std::string& cxx, const std::string& host_compiler) {
  return cxx.empty() ? host_compiler : cxx;
}

// Links a small shared C++ library with `compiler` ($CXX's words) in a
// scratch dir and reads which libraries it needs. When libstdc++.so.6 is
// not among them, a dir of `links_dir` for this machine and runtime gets a
// libstdc++.so link to the system's shared runtime and the trial is
// repeated with it on the library path (then, where the compiler still
// prefers its static copy, with -lstdc++ named), with -z defs: a runtime
// older than the compiler's headers fails the trial. Runs no more than
// three compiles; never throws for the compiler's failures.
CxxRuntimeLink probe_cxx_runtime_link(const std::string& compiler, const std::filesystem::path& links_dir);

// The libstdc++.so.6 the dynamic loader finds in the system's library dirs
// for `triplet` (the compiler's -dumpmachine: "x86_64-linux-gnu"), as
// torch's libraries get it.
std::optional<std::filesystem::path> find_shared_cxx_runtime(const std::string& triplet);

// Whether one of `needed` (an ELF file's DT_NEEDED) is the shared C++ runtime.
bool needs_shared_cxx_runtime(const std::vector<std::string>& needed);

inline constexpr const char* kSharedCxxRuntime = "libstdc++.so.6";

}  // namespace archbuild
