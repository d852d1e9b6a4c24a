#include "wheel/wheel_variant.h"

#include <algorithm>

#include "core/sha256.h"

namespace archbuild {

std::optional<VariantFeatures> nvidia_variant_features(const ArchList& targets, const CudaVersion& cuda) {
  VariantFeatures features;
  auto& arch = features["sm_arch"];
  for (const auto& target : targets.targets()) {
    if (target.variant != ArchVariant::plain) return std::nullopt;
    const auto digits = std::to_string(target.cc.major) + std::to_string(target.cc.minor);
    if (target.sass) arch.push_back(digits + "_real");
    if (target.ptx) arch.push_back(digits + "_virtual");
  }
  if (arch.empty()) return std::nullopt;
  std::sort(arch.begin(), arch.end());
  features["cuda_version_lower_bound"] = {std::to_string(cuda.major) + "." + std::to_string(cuda.minor)};
  return features;
}

std::string variant_label(const VariantFeatures& features) {
  std::vector<std::string> lines;
  for (const auto& [feature, values] : features)
    for (const auto& value : values) lines.push_back("nvidia :: " + feature + " :: " + value + "\n");
  std::sort(lines.begin(), lines.end());
  std::string text;
  for (const auto& line : lines) text += line;
  return sha256_hex(text).substr(0, 8);
}

nlohmann::json variants_document(const std::map<std::string, VariantFeatures>& by_label) {
  nlohmann::json variants = nlohmann::json::object();
  for (const auto& [label, features] : by_label) variants[label]["nvidia"] = features;
  return {{"$schema", "https://variants-schema.wheelnext.dev/v0.2.0.json"},
          {"default-priorities", {{"namespace", {"nvidia"}}}},
          {"providers",
           {{"nvidia",
             {{"requires", {"nvidia-variant-provider>=0.0.1,<1.0.0"}},
              {"plugin-api", "nvidia_variant_provider.plugin:NvidiaVariantPlugin"}}}}},
          {"variants", variants}};
}

std::string variant_file_name(const std::string& wheel_file, const std::string& label) {
  return wheel_file.substr(0, wheel_file.size() - 4) + "-" + label + ".whl";
}

std::string variants_index_file_name(const std::string& wheel_file) {
  auto first = wheel_file.find('-');
  auto second = wheel_file.find('-', first + 1);
  return wheel_file.substr(0, second) + "-variants.json";
}

}  // namespace archbuild
