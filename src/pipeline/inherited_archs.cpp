#include "pipeline/inherited_archs.h"

#include "cache/indexed_builds.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "process/run_process.h"
#include "wheel/build_record.h"

namespace archbuild {

namespace {

// The record of the distribution installed for `python`, if it has one.
std::optional<BuildRecord> installed_record(const std::string& python, const std::string& distribution) {
  const std::string script =
      "import importlib.metadata as m, sys\n"
      "try:\n"
      "    text = m.distribution(sys.argv[1]).read_text('" +
      std::string(BuildRecord::kFileName) +
      "')\n"
      "except m.PackageNotFoundError:\n"
      "    sys.exit(3)\n"
      "print(m.version(sys.argv[1]))\n"
      "print(text or '', end='')\n";
  auto result = run_process({python, "-c", script, distribution});
  if (!result.status.signaled && result.status.code == 3)
    fail_bad_input(python + " has no " + distribution + " installed");
  if (!result.succeeded())
    fail_environment("cannot read " + distribution + "'s metadata with " + python + ": " + result.describe_status());
  auto newline = result.out.find('\n');
  auto text = newline == std::string::npos ? std::string() : result.out.substr(newline + 1);
  if (text.empty()) return std::nullopt;
  auto json = nlohmann::json::parse(text, nullptr, false);
  const auto origin = "the installed " + distribution + "'s .dist-info/" + BuildRecord::kFileName;
  if (json.is_discarded()) fail_bad_input(origin + ": not valid JSON");
  return BuildRecord::from_json(json, origin);
}

InheritedArchs from_record(const BuildRecord& record, const std::string& where) {
  return {record.targets, record.recipe + " " + record.version + " (" + where + ")"};
}

}  // namespace

InheritedArchs inherit_archs(const TorchSource& torch, const Recipe& recipe, const CacheLayout& cache,
                             const std::string& cuda, const std::string& python) {
  const std::string pass_arch = "; pass --arch (native, 9.0, \"8.0;9.0+PTX\", ...)";
  if (recipe.depends_on.empty())
    fail_bad_input("--arch is required: recipe " + recipe.name +
                   " builds against no torch whose arch list it could take");
  const auto& dependency = recipe.depends_on.front();
  if (torch.kind == TorchSource::Kind::wheel) {
    auto record = read_build_record(torch.wheel);
    if (!record)
      fail_bad_input("--torch-wheel " + torch.wheel.string() + " was not built by archbuild (no .dist-info/" +
                     BuildRecord::kFileName + " says its arch list)" + pass_arch);
    return from_record(*record, "--torch-wheel, its .dist-info/" + std::string(BuildRecord::kFileName));
  }
  if (torch.kind == TorchSource::Kind::installed) {
    auto record = installed_record(python, dependency);
    if (!record)
      fail_bad_input("the " + dependency + " installed for " + python + " was not built by archbuild (no .dist-info/" +
                     BuildRecord::kFileName + " says its arch list)" + pass_arch);
    return from_record(*record, "installed for " + python);
  }
  std::map<std::string, BuildRecord> by_targets;  // one per arch list, the first (newest) entry's
  for (const auto& build : host_builds(cache.root(), dependency, cuda))
    by_targets.emplace(build.record.targets.canonical(), build.record);
  if (by_targets.size() == 1) return from_record(by_targets.begin()->second, "the cache's only " + dependency);
  if (by_targets.empty())
    fail_bad_input("no arch list to take: the cache holds no " + dependency + " built by archbuild for CUDA " + cuda +
                   pass_arch);
  std::vector<std::string> lists;
  for (const auto& [targets, record] : by_targets) lists.push_back(targets + " (" + record.version + ")");
  fail_bad_input("the cache holds " + dependency + " for several arch lists: " + join(lists, ", ") +
                 "; pass --arch to pick one");
}

}  // namespace archbuild
