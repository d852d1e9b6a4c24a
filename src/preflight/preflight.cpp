#include "preflight/preflight.h"

#include <signal.h>
#include <stdlib.h>

#include <future>
#include <sstream>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/private_dir.h"
#include "core/regular_file.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "process/process_group_runner.h"

namespace archbuild {

std::string first_error_line(const std::string& output) {
  std::istringstream lines(output);
  std::string line, first_nonempty;
  while (std::getline(lines, line)) {
    auto lowered = to_lower(line);
    if (lowered.find("error") != std::string::npos || lowered.find("fatal") != std::string::npos) return trim(line);
    if (first_nonempty.empty() && !trim(line).empty()) first_nonempty = trim(line);
  }
  return first_nonempty;
}

int compare_driver_versions(const std::string& a, const std::string& b) {
  auto pa = split_any(a, "."), pb = split_any(b, ".");
  for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    long va = i < pa.size() ? std::atol(pa[i].c_str()) : 0;
    long vb = i < pb.size() ? std::atol(pb[i].c_str()) : 0;
    if (va != vb) return va < vb ? -1 : 1;
  }
  return 0;
}

PreflightCheck check_driver(const Toolchain& toolchain, const GpuReport& gpus) {
  PreflightCheck check{"driver", CheckVerdict::ok, ""};
  if (!gpus.driver_cuda) {
    check.verdict = CheckVerdict::skip;
    check.detail = "not checked: " +
                   (gpus.unavailable_reason.empty() ? std::string("no driver") : gpus.unavailable_reason);
    return check;
  }
  auto driver = *gpus.driver_cuda;
  auto needed = toolchain.version();
  std::string driver_text = "driver " + (gpus.driver_version.empty() ? "" : gpus.driver_version + " ") +
                            "supports CUDA " + driver.str();
  if (driver >= needed) {
    check.detail = driver_text + " >= toolkit CUDA " + needed.str();
  } else if (driver.major == needed.major) {
    check.verdict = CheckVerdict::warn;
    check.detail = driver_text + " < toolkit CUDA " + needed.str() +
                   ": SASS runs (minor-version compatibility), but PTX from this toolkit will not "
                   "JIT; update the driver to " +
                   toolchain.facts.min_driver + " or newer";
  } else {
    check.verdict = CheckVerdict::fail;
    check.detail = driver_text + ", too old for toolkit CUDA " + needed.str() + ": install driver " +
                   toolchain.facts.min_driver + " or newer";
  }
  return check;
}

namespace {
// nvcc's messages for one probe are a few lines; a compiler that floods is cut here.
constexpr size_t kMaxCompileOutput = 64 << 10;
}  // namespace

PreflightCheck check_compile(const Toolchain& toolchain, const HostCompiler& host, const ArchTarget& target,
                             const std::filesystem::path& scratch) {
  std::string arch = "compute_" + std::to_string(target.cc.number()) + variant_suffix(target.variant);
  std::string sm = "sm_" + std::to_string(target.cc.number()) + variant_suffix(target.variant);
  std::string code = target.sass && target.ptx ? "[" + sm + "," + arch + "]" : target.sass ? sm : arch;
  PreflightCheck check{"compile " + target.canonical(), CheckVerdict::ok, ""};
  auto source = scratch / "probe.cu";
  auto object = scratch / (target.gpu_code_name() + (target.ptx ? "_ptx" : "") + ".o");
  std::vector<std::string> argv = {toolchain.installed->nvcc.string(),
                                   "-ccbin",
                                   host.path.string(),
                                   "-gencode",
                                   "arch=" + arch + ",code=" + code,
                                   "-c",
                                   source.string(),
                                   "-o",
                                   object.string()};
  // In its own process group, as a build's compiles: an interrupt or the
  // timeout stops nvcc with the cicc and ptxas it started.
  GroupRunSpec spec{.argv = argv, .working_dir = scratch, .timeout = std::chrono::minutes(5)};
  std::string output;
  auto outcome = run_in_process_group(spec,
                                      [&](std::string_view line, bool) {
                                        if (output.size() < kMaxCompileOutput) output.append(line).append("\n");
                                      },
                                      {});
  if (outcome.succeeded()) {
    check.detail = "nvcc " + toolchain.installed->release + " + " + host.kind + " " + host.version +
                   " built a kernel for " + code;
  } else {
    check.verdict = CheckVerdict::fail;
    check.detail = first_error_line(output) + " (" + outcome.describe() + ")";
  }
  return check;
}

namespace {

PreflightCheck check_disk(const std::string& name, const std::filesystem::path& dir, uint64_t needed) {
  uint64_t free_bytes = free_disk_bytes(dir);
  PreflightCheck check{name, CheckVerdict::ok, ""};
  check.detail = format_bytes(free_bytes) + " free at " + dir.string() + " (needs " + format_bytes(needed) + ")";
  if (free_bytes < needed) check.verdict = CheckVerdict::fail;
  return check;
}

PreflightCheck check_memory(uint64_t job_bytes) {
  PreflightCheck check{"memory", CheckVerdict::ok, ""};
  auto available = available_memory_bytes();
  if (!available) {
    check.verdict = CheckVerdict::warn;
    check.detail = "cannot read MemAvailable from /proc/meminfo";
    return check;
  }
  uint64_t jobs = job_bytes ? *available / job_bytes : cpu_count();
  check.detail = format_bytes(*available) + " available: room for " + std::to_string(jobs) + " compile jobs of " +
                 format_bytes(job_bytes) + " (" + std::to_string(cpu_count()) + " cores)";
  if (jobs == 0) check.verdict = CheckVerdict::fail;
  return check;
}

PreflightCheck check_host_compiler(const HostCompiler& host) {
  PreflightCheck check{"host compiler", CheckVerdict::ok, ""};
  check.detail = host.kind + " " + host.version + " (" + host.path.string() + ", " + host.how_chosen + ")";
  if (!host.max_major) {
    check.verdict = CheckVerdict::warn;
    check.detail += ": this nvcc's limit is unknown";
  } else if (!host.accepted()) {
    check.verdict = CheckVerdict::fail;
    check.detail += ": nvcc accepts " + host.kind + " <= " + std::to_string(*host.max_major) + " (" +
                    host.limit_source + "); set CUDAHOSTCXX to an older compiler";
  } else {
    check.detail += ", nvcc accepts <= " + std::to_string(*host.max_major);
  }
  return check;
}

}  // namespace

PreflightCheck check_cxx_runtime(const std::string& host_compiler, const std::filesystem::path& scratch) {
  const char* cxx = std::getenv("CXX");
  const auto link = probe_cxx_runtime_link(extension_link_compiler(cxx ? cxx : "", host_compiler),
                                           scratch / "cxx-runtime");
  const auto verdict = !link.probed            ? CheckVerdict::skip
                       : !link.failure.empty() ? CheckVerdict::fail
                       : link.remedied()       ? CheckVerdict::warn
                                               : CheckVerdict::ok;
  // The build's own links dir is in its cache: this scratch one is not worth naming.
  const auto name = std::filesystem::path(link.compiler).filename().string();
  return {"C++ runtime", verdict,
          link.remedied() ? name + " links libstdc++ statically; a build links the shared one (" +
                                link.runtime.string() + ") as torch's libraries do"
                          : link.summary()};
}

std::vector<PreflightCheck> run_preflight(const PreflightInputs& in) {
  std::vector<PreflightCheck> checks;
  const Toolchain& toolchain = *in.toolchain;
  PreflightCheck toolkit{"toolkit", CheckVerdict::ok, toolchain.describe()};
  if (!toolchain.installed) {
    toolkit.verdict = CheckVerdict::fail;
    toolkit.detail += ": a build needs it installed";
  }
  checks.push_back(toolkit);

  std::optional<HostCompiler> host;
  try {
    host = detect_host_compiler(toolchain);
    checks.push_back(check_host_compiler(*host));
  } catch (const UserError& e) {
    checks.push_back({"host compiler", CheckVerdict::fail, e.what()});
  }

  if (toolchain.installed && host) {
    // From the scratch dir's making to its removal a SIGINT/SIGTERM is only
    // recorded: each nvcc run sees it and stops its group, the dir goes
    // (also when a check throws), and then the interrupt is reported.
    InterruptibleScope interruptible;
    {
      PrivateDir scratch(std::filesystem::temp_directory_path(), "archbuild-check");  // the probes' dir
      write_whole_file(scratch.path / "probe.cu",
                       "__global__ void archbuild_probe(float* out) { out[threadIdx.x] = threadIdx.x; }\n");
      // nvcc runs are independent: one per target, in parallel. Declared
      // after the dir, so a throwing get() still waits for every run before the dir goes.
      std::vector<std::future<PreflightCheck>> compiles;
      for (const auto& target : in.archs->targets())
        compiles.push_back(std::async(std::launch::async,
                                      [&, target] { return check_compile(toolchain, *host, target, scratch.path); }));
      for (auto& compile : compiles) checks.push_back(compile.get());
      checks.push_back(check_cxx_runtime(host->path.string(), scratch.path));
    }
    if (int signo = pending_interrupt())
      throw UserError(ExitCode::interrupted, std::string("check interrupted by ") +
                                                 (signo == SIGTERM ? "SIGTERM" : "SIGINT") +
                                                 ": its nvcc runs were stopped and its scratch dir removed");
  } else {
    for (const auto& target : in.archs->targets())
      checks.push_back({"compile " + target.canonical(), CheckVerdict::skip, "no installed toolkit or host compiler"});
  }

  checks.push_back(check_driver(toolchain, *in.gpus));
  checks.push_back(check_disk("disk (build)", in.build_dir, in.min_build_disk_bytes));
  checks.push_back(check_disk("disk (temp)", in.temp_dir, in.min_temp_disk_bytes));
  checks.push_back(check_memory(in.job_memory_bytes));
  return checks;
}

}  // namespace archbuild
