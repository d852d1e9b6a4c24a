#include "validate/wheel_audit.h"

#include <map>
#include <set>

#include "core/data_dir.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/run_process.h"
#include "toolchain/cxx_runtime_link.h"

namespace archbuild {

namespace {

const std::map<std::string, LibrarySource>& source_names() {
  static const std::map<std::string, LibrarySource> names = {
      {"wheel", LibrarySource::wheel},     {"system", LibrarySource::system}, {"driver", LibrarySource::driver},
      {"torch", LibrarySource::torch},     {"cuda", LibrarySource::cuda},     {"machine", LibrarySource::machine},
      {"missing", LibrarySource::missing},
  };
  return names;
}

}  // namespace

std::string to_string(LibrarySource source) {
  for (const auto& [name, value] : source_names())
    if (value == source) return name;
  return "missing";
}

std::vector<LibraryNeed> WheelAudit::not_portable() const {
  std::vector<LibraryNeed> found;
  std::set<std::string> seen;
  for (const auto& file : files)
    for (const auto& need : file.needs)
      if ((need.from == LibrarySource::machine || need.from == LibrarySource::missing) &&
          seen.insert(need.soname).second)
        found.push_back(need);
  return found;
}

std::vector<std::string> WheelAudit::own_cxx_runtime() const {
  std::vector<std::string> found;
  for (const auto& file : files) {
    bool links_torch = false, shared_runtime = false;
    for (const auto& need : file.needs) {
      // torch's C++ libraries, not what torch/lib also ships (libgomp, a C file's only need)
      links_torch |= need.from == LibrarySource::torch &&
                     (need.soname.starts_with("libc10") || need.soname.starts_with("libtorch"));
      shared_runtime |= need.soname == kSharedCxxRuntime;
    }
    if (links_torch && !shared_runtime) found.push_back(file.file);
  }
  return found;
}

std::string WheelAudit::summary() const {
  if (!ran) return "not audited: " + skipped_reason;
  const auto needs = not_portable();
  if (files.empty()) return "portable: the wheel holds no ELF file";
  if (needs.empty())
    return "portable as " + platform_tag +
           " (torch's, CUDA's and the driver's libraries from their own wheels "
           "and the node)";
  std::vector<std::string> named;
  for (const auto& need : needs)
    named.push_back(need.soname + (need.path.empty() ? " (found nowhere here)" : " (" + need.path + ")"));
  return "not portable: " + join(named, ", ") + (needs.size() == 1 ? " is" : " are") +
         " met only on this machine: a node without " + (needs.size() == 1 ? "it" : "them") +
         " cannot load the wheel (its symbols allow " + symbol_tag + ")";
}

nlohmann::json WheelAudit::to_json() const {
  nlohmann::json json = {{"ran", ran}, {"summary", summary()}, {"portable", portable()}};
  if (!ran) {
    json["skipped_reason"] = skipped_reason;
    return json;
  }
  json["auditwheel"] = auditwheel_version;
  json["platform_tag"] = platform_tag;
  json["symbol_tag"] = symbol_tag;
  auto listed = nlohmann::json::array();
  for (const auto& need : not_portable())
    listed.push_back({{"soname", need.soname}, {"from", to_string(need.from)}, {"path", need.path}});
  json["not_portable"] = listed;
  json["own_cxx_runtime"] = own_cxx_runtime();
  auto by_file = nlohmann::json::array();
  for (const auto& file : files) {
    auto needs = nlohmann::json::array();
    for (const auto& need : file.needs)
      needs.push_back({{"soname", need.soname}, {"from", to_string(need.from)}, {"path", need.path}});
    by_file.push_back({{"file", file.file}, {"needs", needs}});
  }
  json["files"] = by_file;
  return json;
}

WheelAudit WheelAudit::from_frontend_json(const std::string& output) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(output);
  } catch (const nlohmann::json::exception&) {
    fail_environment("the wheel audit printed no JSON: " + output.substr(0, 200));
  }
  if (!json.is_object() || !json.contains("files") || !json["files"].is_array())
    fail_environment("the wheel audit's answer has no list of files");
  WheelAudit audit;
  audit.ran = true;
  audit.auditwheel_version = json_string(json, "auditwheel");
  audit.platform_tag = json_string(json, "platform_tag");
  audit.symbol_tag = json_string(json, "symbol_tag");
  audit.system_libraries = json_strings(json, "system_libraries");
  audit.exclude_patterns = json_strings(json, "exclude_patterns");
  for (const auto& file : json["files"]) {
    if (!file.is_object()) fail_environment("the wheel audit's answer lists a file that is not an object");
    AuditedFile audited{json_string(file, "file"), {}};
    if (file.contains("needs") && file["needs"].is_array())
      for (const auto& need : file["needs"]) {
        if (!need.is_object()) continue;
        const auto from = source_names().find(json_string(need, "from"));
        if (from == source_names().end())
          fail_environment("the wheel audit sorted " + json_string(need, "soname") + " as '" +
                           json_string(need, "from") + "', which is no source archbuild knows");
        audited.needs.push_back({json_string(need, "soname"), from->second, json_string(need, "path")});
      }
    audit.files.push_back(std::move(audited));
  }
  return audit;
}

WheelAudit audit_wheel(const std::string& python, const std::filesystem::path& tool_path,
                       const std::filesystem::path& wheel) {
  WheelAudit skipped;
  ProcessOptions options;
  options.env_overrides["PYTHONPATH"] = tool_path.string();
  options.env_overrides["PYTHONDONTWRITEBYTECODE"] = "1";
  options.timeout = std::chrono::minutes(5);
  try {
    auto result = run_process({python, (data_dir() / "recipes" / "frontends" / "wheel_audit.py").string(),
                               wheel.string()},
                              options);
    if (!result.succeeded()) {
      const auto& err = result.err.empty() ? result.out : result.err;
      const auto last = split_any(err, "\n");
      skipped.skipped_reason = "auditwheel failed: " + (last.empty() ? std::string("no message") : last.back());
      return skipped;
    }
    return WheelAudit::from_frontend_json(result.out);
  } catch (const UserError& error) {
    skipped.skipped_reason = secrets::scrub(error.what());
    return skipped;
  }
}

}  // namespace archbuild
