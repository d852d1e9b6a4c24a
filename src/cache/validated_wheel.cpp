#include "cache/validated_wheel.h"

#include <cstdint>

namespace archbuild {

namespace {

std::string text_field(const nlohmann::json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>()
                                                                               : std::string();
}

const nlohmann::json* object_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_object()) return nullptr;
  return &object[key];
}

ValidatedWheel::Census read_census(const nlohmann::json& census) {
  ValidatedWheel::Census read{text_field(census, "summary"), {}, 0};
  if (census.contains("launched") && census["launched"].is_array())
    for (const auto& kernel : census["launched"]) read.launched.push_back(text_field(kernel, "demangled"));
  if (census.contains("launched_count") && census["launched_count"].is_number_integer() &&
      census["launched_count"].get<int64_t>() >= 0)
    read.launched_count = census["launched_count"].get<size_t>();
  return read;
}

}  // namespace

ValidatedWheel ValidatedWheel::from_json(const nlohmann::json& json) {
  ValidatedWheel wheel;
  wheel.wheel = text_field(json, "wheel");
  wheel.detail = json;
  if (const auto* audit = object_field(json, "audit")) wheel.audit = text_field(*audit, "summary");
  if (const auto* device = object_field(json, "device")) {
    wheel.device_ran = device->contains("ran") && (*device)["ran"].is_boolean() && (*device)["ran"].get<bool>();
    if (const auto* census = object_field(*device, "kernel_census")) wheel.census = read_census(*census);
  }
  return wheel;
}

}  // namespace archbuild
