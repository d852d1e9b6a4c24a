#include "wheel/build_record.h"

#include <zip.h>

#include "arch/arch_spec.h"
#include "core/error.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

nlohmann::json BuildRecord::to_json() const {
  return {{"format", kFormat},       {"built_by", "archbuild"},        {"recipe", recipe}, {"version", version},
          {"arch_list", arch_list},  {"targets", targets.canonical()}, {"cuda", cuda},     {"key", key},
          {"key_inputs", key_inputs}};
}

BuildRecord BuildRecord::from_json(const nlohmann::json& json, const std::string& origin) {
  auto text = [&](const char* field) {
    if (!json.contains(field) || !json[field].is_string())
      fail_bad_input(origin + ": not an archbuild build record ('" + field + "' is missing or not a string)");
    return json[field].get<std::string>();
  };
  if (!json.is_object() || !json.contains("format") || json["format"] != kFormat)
    fail_bad_input(origin + ": not an archbuild build record of format " + std::to_string(kFormat));
  BuildRecord record{text("recipe"), text("version"), text("arch_list"), {}, text("cuda"), text("key"), {}};
  try {
    record.targets = parse_arch_list(text("targets"));
  } catch (const UserError& error) {
    fail_bad_input(origin + ": its targets: " + error.what());
  }
  if (json.contains("key_inputs") && json["key_inputs"].is_object())
    for (const auto& [key, value] : json["key_inputs"].items())
      if (value.is_string()) record.key_inputs[key] = value.get<std::string>();
  return record;
}

std::optional<BuildRecord> read_build_record(const std::filesystem::path& wheel) {
  auto archive = open_wheel_for_reading(wheel);
  const auto dist_info = find_dist_info(archive.get());
  const auto member = dist_info + "/" + BuildRecord::kFileName;
  auto index = zip_name_locate(archive.get(), member.c_str(), 0);
  if (dist_info.empty() || index < 0) return std::nullopt;
  const auto origin = wheel.string() + "!" + member;
  auto json = nlohmann::json::parse(read_zip_member(archive.get(), index, member, 1 << 20), nullptr, false);
  if (json.is_discarded()) fail_bad_input(origin + ": not valid JSON");
  return BuildRecord::from_json(json, origin);
}

}  // namespace archbuild
