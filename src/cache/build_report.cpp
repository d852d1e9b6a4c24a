#include "cache/build_report.h"

#include "core/sha256.h"

namespace archbuild {

ValidationLevel proven_level(bool device_ran, bool kernels_launched, bool results_compared) {
  if (!device_ran) return ValidationLevel::static_only;
  if (!kernels_launched) return ValidationLevel::loaded;
  return results_compared ? ValidationLevel::checked : ValidationLevel::launched;
}

std::string to_string(ValidationLevel level) {
  switch (level) {
    case ValidationLevel::none: return "none";
    case ValidationLevel::static_only: return "static";
    case ValidationLevel::loaded: return "loaded";
    case ValidationLevel::launched: return "launched";
    case ValidationLevel::checked: return "checked";
  }
  return "none";
}

std::optional<ValidationLevel> parse_validation_level(const std::string& text) {
  if (text == "device") return ValidationLevel::launched;  // the name before `checked` was told apart
  for (auto level : {ValidationLevel::none, ValidationLevel::static_only, ValidationLevel::loaded,
                     ValidationLevel::launched, ValidationLevel::checked})
    if (to_string(level) == text) return level;
  return std::nullopt;
}

ReportedWheel ReportedWheel::of(const std::filesystem::path& wheel) {
  return {wheel.filename().string(), wheel, sha256_file_hex(wheel), std::filesystem::file_size(wheel)};
}

nlohmann::json BuildReport::to_json() const {
  auto wheel_list = nlohmann::json::array();
  for (const auto& wheel : wheels)
    wheel_list.push_back(
        {{"file", wheel.file}, {"path", wheel.path.string()}, {"sha256", wheel.sha256}, {"size", wheel.size}});
  nlohmann::json json = {{"cache_hit", cache_hit}, {"key", key}, {"plan", plan}, {"source", source}};
  // A build that produced no wheel says so by what it lacks: no wheels, no
  // validation fields (validated=false would read as --no-validate).
  const bool has_wheels = cache_hit || !local_version_label.empty();
  if (!cache_hit) {
    json["build"] = build;
    json["published"] = published;
  }
  if (has_wheels) {
    json["wheels"] = wheel_list;
    json["validation_level"] = to_string(validation_level);
    if (!validation_scope.empty()) json["validation_scope"] = validation_scope;
  }
  if (!cache_hit && has_wheels) {
    json["validated"] = validated;
    auto wheels_validated = nlohmann::json::array();
    for (const auto& wheel : validation) wheels_validated.push_back(wheel.to_json());
    json["validation"] = wheels_validated;
    json["local_version_label"] = local_version_label;
  }
  if (cache_hit || published) json["install"] = install;
  if (quarantine) json["quarantine"] = quarantine->string();
  if (!published_at.empty()) json["published_at"] = published_at;
  if (store) json["store"] = store->string();
  if (index) json["index"] = index->string();
  if (!repair.empty()) json["repair"] = repair;
  if (!cuda_switches_set.empty()) {
    auto set = nlohmann::json::array();
    for (const auto& [name, value] : cuda_switches_set) set.push_back({{"name", name}, {"value", value}});
    json["cuda_switches_set"] = set;
  }
  return json;
}

std::vector<BuildReport::KernelCensus> BuildReport::kernel_censuses() const {
  std::vector<KernelCensus> censuses;
  for (const auto& wheel : validation)
    if (wheel.census) censuses.push_back(*wheel.census);
  return censuses;
}

std::string BuildReport::kernel_census_summary() const {
  std::string text;
  for (const auto& census : kernel_censuses())
    if (!census.summary.empty()) text += (text.empty() ? "" : "; ") + census.summary;
  return text;
}

std::string BuildReport::audit_summary() const {
  std::string text;
  for (const auto& wheel : validation)
    if (!wheel.audit.empty()) text += (text.empty() ? "" : "; ") + wheel.audit;
  return text;
}

std::optional<size_t> BuildReport::kernels_launched() const {
  std::optional<size_t> total;
  for (const auto& census : kernel_censuses()) total = total.value_or(0) + census.launched_count;
  return total;
}

namespace {

template <typename T>
T field(const nlohmann::json& json, const char* name, T fallback) {
  if (!json.is_object() || !json.contains(name)) return fallback;
  try {
    return json.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

std::optional<std::filesystem::path> path_field(const nlohmann::json& json, const char* name) {
  auto text = field<std::string>(json, name, "");
  if (text.empty()) return std::nullopt;
  return std::filesystem::path(text);
}

}  // namespace

BuildReport BuildReport::from_json(const nlohmann::json& json) {
  BuildReport report;
  if (!json.is_object()) return report;
  report.cache_hit = field(json, "cache_hit", false);
  report.key = field<std::string>(json, "key", "");
  report.plan = json.value("plan", nlohmann::json());
  report.source = json.value("source", nlohmann::json());
  report.build = json.value("build", nlohmann::json());
  for (const auto& wheel : field(json, "validation", std::vector<nlohmann::json>{}))
    report.validation.push_back(ValidatedWheel::from_json(wheel));
  report.validated = field(json, "validated", true);
  if (auto level = parse_validation_level(field<std::string>(json, "validation_level", ""))) {
    report.validation_level = *level;
  } else if (report.validated) {
    // written before the level was recorded: derive it from the per-wheel results
    report.validation_level = ValidationLevel::static_only;
    bool device = !report.validation.empty();
    for (const auto& wheel : report.validation) device = device && wheel.device_ran;
    if (device) report.validation_level = ValidationLevel::launched;
  }
  report.validation_scope = field<std::string>(json, "validation_scope", "");
  for (const auto& wheel : field(json, "wheels", std::vector<nlohmann::json>{}))
    report.wheels.push_back({field<std::string>(wheel, "file", ""), field<std::string>(wheel, "path", ""),
                             field<std::string>(wheel, "sha256", ""), field<uint64_t>(wheel, "size", 0)});
  report.local_version_label = field<std::string>(json, "local_version_label", "");
  report.quarantine = path_field(json, "quarantine");
  report.published_at = field<std::string>(json, "published_at", "");
  report.store = path_field(json, "store");
  report.index = path_field(json, "index");
  report.install = field(json, "install", std::vector<std::string>{});
  if (json.contains("repair") && json["repair"].is_array()) report.repair = json["repair"];
  report.published = field(json, "published", false);
  for (const auto& entry : field(json, "cuda_switches_set", std::vector<nlohmann::json>{}))
    report.cuda_switches_set.emplace_back(field<std::string>(entry, "name", ""),
                                          field<std::string>(entry, "value", ""));
  return report;
}

}  // namespace archbuild
