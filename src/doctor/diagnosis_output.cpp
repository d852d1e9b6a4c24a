#include "doctor/diagnosis_output.h"

#include <algorithm>

#include "core/strings.h"
#include "ui/terminal.h"

namespace archbuild {

namespace {

Style verdict_style(PackageVerdict verdict) {
  switch (verdict) {
    case PackageVerdict::ok: return Style::green;
    case PackageVerdict::ptx_jit: return Style::yellow;
    case PackageVerdict::no_kernel_image:
    case PackageVerdict::driver_too_old: return Style::red;
    case PackageVerdict::not_judged: return Style::dim;
  }
  return Style::plain;
}

}  // namespace

std::string package_text(const PackageDiagnosis& package) {
  std::string padded = to_string(package.verdict);
  padded.resize(16, ' ');
  std::string name = printable(package.name);
  name.resize(std::max<size_t>(name.size(), 14), ' ');
  size_t cuda_files = 0;
  for (const auto* file : package.files) cuda_files += file->has_cuda_code();
  std::string text = "  " + paint(padded, verdict_style(package.verdict)) + " " + name + " " +
                     std::to_string(cuda_files) + " CUDA librar" + (cuda_files == 1 ? "y" : "ies") +
                     (package.judged() ? "" : " (" + package.not_judged_reason + ")") + "\n";
  if (!package.judged()) return text;
  for (const auto& problem : package.problems) text += "      " + printable(problem) + "\n";
  text += fixes_text(package.fixes, "      ");
  return text;
}

std::string fixes_text(const std::vector<Fix>& fixes, const std::string& indent) {
  std::string text;
  int number = 0;
  for (const auto& fix : fixes) {
    std::string kind = to_string(fix.kind);
    std::replace(kind.begin(), kind.end(), '-', ' ');
    text += indent + (fix.lines.empty() ? std::string("-") : std::to_string(++number) + ".") + " " +
            paint(kind, Style::bold) + ": " + printable(fix.why) + "\n";
    for (const auto& line : fix.lines) text += indent + "   fix: " + paint(printable(line), Style::cyan) + "\n";
  }
  return text;
}

nlohmann::json fixes_json(const std::vector<Fix>& fixes) {
  auto out = nlohmann::json::array();
  for (const auto& fix : fixes) out.push_back({{"kind", to_string(fix.kind)}, {"why", fix.why}, {"lines", fix.lines}});
  return out;
}

nlohmann::json package_json(const PackageDiagnosis& package) {
  return {{"name", package.name},       {"site_dir", package.site_dir}, {"verdict", to_string(package.verdict)},
          {"judged", package.judged()}, {"problems", package.problems}, {"fixes", fixes_json(package.fixes)}};
}

}  // namespace archbuild
