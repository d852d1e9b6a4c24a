#include "pipeline/build_intent.h"

namespace archbuild {

std::string TorchSource::describe() const {
  switch (kind) {
    case Kind::wheel: return "--torch-wheel " + wheel.string();
    case Kind::installed: return "--use-installed-torch";
    case Kind::cache: break;
  }
  return "the cache's torch";
}

BuildIntent BuildIntent::of(const BuildRequest& request) {
  BuildIntent intent;
  intent.rebuild = request.rebuild;
  intent.keep_project_archs = request.keep_project_archs;
  intent.allow_network = request.allow_network;
  intent.set_cuda_switches = !request.no_cuda_switches;
  if (!request.torch_wheel.empty())
    intent.torch = {TorchSource::Kind::wheel, request.torch_wheel};
  else if (request.use_installed_torch)
    intent.torch.kind = TorchSource::Kind::installed;
  intent.validation = {!request.no_validate, request.test_timeout_seconds, request.max_failed_tests};
  intent.cuda = request.cuda;
  intent.mirrors = request.mirrors;
  intent.patches = request.patches;
  intent.setting_flags = request.setting_flags;
  return intent;
}

}  // namespace archbuild
