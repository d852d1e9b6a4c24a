#include "arch/compute_capability.h"

#include <cctype>

namespace archbuild {

namespace {
bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}
}  // namespace

std::string ComputeCapability::dotted() const { return std::to_string(major) + "." + std::to_string(minor); }

std::optional<ComputeCapability> ComputeCapability::parse_dotted(std::string_view text) {
  auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto major_text = text.substr(0, dot);
  auto minor_text = text.substr(dot + 1);
  if (!all_digits(major_text) || major_text.size() > 2 || minor_text.size() != 1 || !all_digits(minor_text))
    return std::nullopt;
  ComputeCapability cc{std::stoi(std::string(major_text)), minor_text[0] - '0'};
  if (cc.major < 1) return std::nullopt;
  return cc;
}

std::optional<ComputeCapability> ComputeCapability::parse_digits(std::string_view text) {
  if (!all_digits(text) || text.size() < 2 || text.size() > 3) return std::nullopt;
  ComputeCapability cc{std::stoi(std::string(text.substr(0, text.size() - 1))), text.back() - '0'};
  if (cc.major < 1) return std::nullopt;
  return cc;
}

std::optional<ComputeCapability> ComputeCapability::parse(std::string_view text) {
  if (text.find('.') != std::string_view::npos) return parse_dotted(text);
  return parse_digits(text);
}

bool is_tegra_only(ComputeCapability cc) {
  static constexpr ComputeCapability tegra[] = {{5, 3}, {6, 2}, {7, 2}, {8, 7}};
  for (auto t : tegra)
    if (cc == t) return true;
  return false;
}

}  // namespace archbuild
