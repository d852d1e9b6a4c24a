#include "validate/validation_output.h"

#include "ui/terminal.h"

namespace archbuild {

void print_validation(const WheelValidation& validation, const std::function<void(const std::string&)>& line,
                      std::FILE* stream) {
  const auto& checked = validation.static_checks;
  line(verdict_label(checked.record.ok() ? CheckVerdict::ok : CheckVerdict::fail, stream) +
       " RECORD: " + std::to_string(checked.record.files_checked) + " files hashed");
  for (const auto& error : checked.record.errors) line("     " + error);
  line(verdict_label(checked.gaps.empty() && checked.extras.empty() && checked.unreadable.empty() &&
                             !checked.libraries.empty()
                         ? CheckVerdict::ok
                         : CheckVerdict::fail,
                     stream) +
       " CUDA code: " + std::to_string(checked.libraries.size()) + " librar" +
       (checked.libraries.size() == 1 ? "y" : "ies") + (checked.libraries.empty() ? ", nothing to run on a GPU" : ""));
  for (const auto& gap : checked.gaps)
    line("     " + paint("missing", Style::red, stream) + " " + gap.file + ": " + gap.missing + " (target " +
         gap.target + ")");
  for (const auto& extra : checked.extras)
    line("     " + paint("extra", Style::red, stream) + " " + extra.file + ": " + extra.target +
         ", which was not asked: the label would not say what the wheel holds (a unit the project compiles only "
         "for it? the build log's arch enforcement lines name it; --keep-project-archs labels the wheel by its code)");
  if (!checked.no_cuda_hint.empty()) line("     " + checked.no_cuda_hint);
  for (const auto& text : checked.unreadable) line("     unreadable: " + text);
  // Which libraries a node needs: one met only on this machine fails the wheel.
  line(verdict_label(validation.audit.portable() ? CheckVerdict::ok
                     : !validation.audit_ok()    ? CheckVerdict::fail
                                                 : CheckVerdict::skip,
                     stream) +
       " audit: " + validation.audit.summary());
  if (validation.audit.ran && !validation.audit.portable())
    line("     --portable bundles what only this machine has into the wheel (auditwheel repair) and tags it manylinux");
  for (const auto& file : validation.audit.own_cxx_runtime())
    line(verdict_label(CheckVerdict::fail, stream) + " C++ runtime: " + file +
         " links torch's C++ libraries but carries its own static libstdc++: torch's C++ exceptions (every "
         "TORCH_CHECK) crash it or lose their message. Link the shared libstdc++.so.6 (its compiler links the "
         "static one, or the project passes -static-libstdc++)");
  if (validation.portable_required)
    line(verdict_label(!validation.clean_room.ran   ? CheckVerdict::skip
                       : validation.clean_room.ok() ? CheckVerdict::ok
                                                    : CheckVerdict::fail,
                       stream) +
         " clean room: " + validation.clean_room.summary());
  if (!validation.device.ran) {
    line(verdict_label(CheckVerdict::skip, stream) + " device: " + validation.device.skipped_reason);
    return;
  }
  for (const auto& check : validation.device.checks) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, " [%.1f s]", check.seconds);
    line(verdict_label(check.ok ? CheckVerdict::ok : CheckVerdict::fail, stream) + " device: " + check.name +
         (check.detail.empty() ? "" : ": " + check.detail) + seconds);
    if (!check.ok && !check.log.empty()) line("     log: " + check.log.string());
  }
  if (const auto& census = validation.device.census) {
    const bool launched = validation.device.kernels_launched();
    line(verdict_label(launched ? CheckVerdict::ok : CheckVerdict::warn, stream) + " device: kernel census: " +
         census->summary() + (launched ? "" : "; the wheel counts as `loaded`, not `launched`"));
  }
}

}  // namespace archbuild
