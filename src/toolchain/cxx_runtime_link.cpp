#include "toolchain/cxx_runtime_link.h"

#include <algorithm>

#include "binary/byte_view.h"
#include "binary/elf_file.h"
#include "core/error.h"
#include "core/private_dir.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "process/run_process.h"

namespace archbuild {

namespace {

// Throws and catches a std::exception: the runtime's exception support is
// linked in whichever way the compiler links it.
// <iostream>: gcc 13's headers then need a symbol of its own runtime
// (GLIBCXX_3.4.32), which an older system libstdc++ lacks; with -z defs a
// trial against such a runtime fails instead of a wheel failing at import.
constexpr const char* kProbeSource = R"(#include <iostream>
#include <stdexcept>
#include <string>
extern "C" int archbuild_runtime_probe(int n) {
  try {
    if (n) throw std::runtime_error(std::to_string(n));
  } catch (const std::exception& e) {
    return static_cast<int>(std::string(e.what()).size());
  }
  return 0;
}
)";

struct TrialLink {
  bool linked = false;
  std::string problem;  // why there is no answer
  bool shared_runtime = false;
};

TrialLink trial_link(const std::vector<std::string>& compiler, const std::vector<std::string>& flags,
                     const std::filesystem::path& scratch, const std::string& name) {
  TrialLink trial;
  const auto library = scratch / (name + ".so");
  // The flags go before the source, where LDFLAGS lands in setuptools' link line.
  std::vector<std::string> argv = compiler;
  argv.insert(argv.end(), {"-shared", "-fPIC", "-Wl,-z,defs"});
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {(scratch / "probe.cpp").string(), "-o", library.string()});
  ProcessOptions options;
  options.working_dir = scratch;
  options.timeout = std::chrono::minutes(2);
  ProcessResult result;
  try {
    result = run_process(argv, options);
  } catch (const UserError& error) {  // not found, not executable
    trial.problem = error.what();
    return trial;
  }
  if (!result.succeeded()) {
    const auto line = trim(result.err.empty() ? result.out : result.err);
    trial.problem = join(argv, " ") + ": " + result.describe_status() +
                    (line.empty() ? "" : ": " + line.substr(0, line.find('\n')));
    return trial;
  }
  std::string bytes;
  if (auto why = read_regular_file(library, 64 << 20, bytes); !why.empty()) {
    trial.problem = library.string() + " " + why;
    return trial;
  }
  try {
    const ByteView view(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    trial.shared_runtime = needs_shared_cxx_runtime(elf_needed_libraries(view, read_elf(view)));
    trial.linked = true;
  } catch (const ParseError& error) {
    trial.problem = library.string() + ": " + error.what();
  }
  return trial;
}

}  // namespace

bool needs_shared_cxx_runtime(const std::vector<std::string>& needed) {
  return std::find(needed.begin(), needed.end(), kSharedCxxRuntime) != needed.end();
}

std::optional<std::filesystem::path> find_shared_cxx_runtime(const std::string& triplet) {
  for (const auto& dir : {"/lib/" + triplet, "/usr/lib/" + triplet, std::string("/lib64"), std::string("/usr/lib64"),
                          std::string("/lib"), std::string("/usr/lib")}) {
    std::error_code ec;
    const auto candidate = std::filesystem::path(dir) / kSharedCxxRuntime;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

std::string CxxRuntimeLink::summary() const {
  const auto name = std::filesystem::path(compiler).filename().string();
  if (!probed) return "how " + name + " links the C++ runtime is not known: " + not_probed;
  if (!static_by_default) return name + " links the shared C++ runtime (" + kSharedCxxRuntime + "), as torch does";
  if (!failure.empty()) return name + " links libstdc++ statically: " + failure;
  return name + " links libstdc++ statically; archbuild links the shared one (" + runtime.string() +
         ") as torch's libraries do, with LDFLAGS " + join(ldflags, " ");
}

CxxRuntimeLink probe_cxx_runtime_link(const std::string& compiler, const std::filesystem::path& links_dir) {
  CxxRuntimeLink link;
  link.compiler = compiler;
  // $CXX may carry words ("ccache g++", "g++ -m64"), which setuptools splits too.
  std::vector<std::string> words;
  try {
    words = shell_split(compiler);
  } catch (const std::invalid_argument& error) {
    link.not_probed = "cannot split '" + compiler + "' into words: " + error.what();
    return link;
  }
  if (words.empty()) {
    link.not_probed = "no compiler named";
    return link;
  }
  std::error_code ec;
  std::filesystem::create_directories(links_dir, ec);
  if (ec) {
    link.not_probed = "cannot make " + links_dir.string() + ": " + ec.message();
    return link;
  }
  PrivateDir scratch(links_dir, "probe");
  write_whole_file(scratch.path / "probe.cpp", kProbeSource);
  const auto plain = trial_link(words, {}, scratch.path, "plain");
  if (!plain.linked) {
    link.not_probed = plain.problem;
    return link;
  }
  link.probed = true;
  if (plain.shared_runtime) return link;
  link.static_by_default = true;
  // The runtime of the machine the compiler links for ("x86_64-linux-gnu"),
  // which a cross compiler or an emulated archbuild may not share with uname.
  std::string triplet = host_machine() + "-linux-gnu";
  try {
    if (const auto dumped = run_process({words.front(), "-dumpmachine"});
        dumped.succeeded() && !trim(dumped.out).empty())
      triplet = trim(dumped.out);
  } catch (const UserError&) {
  }
  const auto runtime = find_shared_cxx_runtime(triplet);
  if (!runtime) {
    link.failure = std::string("no shared ") + kSharedCxxRuntime +
                   " in the system's library dirs to link against; an extension built so crashes at torch's first "
                   "C++ exception: set CXX and CUDAHOSTCXX to a compiler that links the shared runtime";
    return link;
  }
  link.runtime = *runtime;
  // The unversioned name the linker looks for, in a dir of its own: on the
  // library path before the compiler's own dirs, it wins over libstdc++.a.
  // One dir per machine and runtime: hosts sharing a cache never replace
  // each other's link.
  const auto own_dir = links_dir / (triplet + "-" + sha256_hex(runtime->string()).substr(0, 12));
  std::filesystem::create_directories(own_dir, ec);
  const auto unversioned = own_dir / "libstdc++.so";
  try {
    place_symlink(*runtime, unversioned);
  } catch (const std::filesystem::filesystem_error& error) {
    link.failure = "cannot link " + unversioned.string() + ": " + error.code().message();
    return link;
  }
  const std::vector<std::vector<std::string>> remedies = {
      {"-L" + own_dir.string()},
      // A compiler whose specs insist on its static copy (-static-libstdc++):
      // the shared one named first (kept though listed before the objects)
      // defines what the static archive would have been pulled in for.
      {"-L" + own_dir.string(), "-Wl,--push-state,--no-as-needed", "-lstdc++", "-Wl,--pop-state"}};
  std::string tried;
  for (size_t i = 0; i < remedies.size(); ++i) {
    const auto trial = trial_link(words, remedies[i], scratch.path, "remedy" + std::to_string(i));
    if (trial.linked && trial.shared_runtime) {
      link.ldflags = remedies[i];
      return link;
    }
    tried += (tried.empty() ? "" : "; ") + join(remedies[i], " ") + ": " +
             (trial.linked ? std::string("still static") : trial.problem);
  }
  link.failure = "linking the shared " + runtime->string() + " did not work (" + tried +
                 "); an extension built so crashes at torch's first C++ exception: set CXX and CUDAHOSTCXX to a "
                 "compiler that links the shared runtime";
  return link;
}

}  // namespace archbuild
