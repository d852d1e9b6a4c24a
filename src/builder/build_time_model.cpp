#include "builder/build_time_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "builder/progress.h"

namespace archbuild {

namespace {

unsigned slots(unsigned parallelism, unsigned cores) { return std::max(1u, std::min(parallelism, cores)); }

// The images one nvcc call compiles one after another: --threads runs them at once.
double serial_images(size_t images, unsigned threads) {
  const auto at_once = std::max<size_t>(1, std::min<size_t>(threads, images));
  return static_cast<double>((images + at_once - 1) / at_once);
}

// d/h from two cold builds of one ref with different image counts:
// c1 / c2 = (1 + k a1) / (1 + k a2)  =>  k = (1 - r) / (r a2 - a1), r = c1 / c2.
double image_cost_ratio(const std::vector<const BuildTimeRecord*>& cold) {
  for (size_t i = cold.size(); i-- > 0;)
    for (size_t j = i; j-- > 0;) {
      const auto& a = *cold[i];
      const auto& b = *cold[j];
      const double a1 = serial_images(a.code_images, a.nvcc_threads);
      const double a2 = serial_images(b.code_images, b.nvcc_threads);
      if (a1 == a2 || a.nvcc_seconds <= 0 || b.nvcc_seconds <= 0) continue;
      double r = a.nvcc_seconds / b.nvcc_seconds;
      double denominator = r * a2 - a1;
      if (std::abs(denominator) < 1e-9) continue;
      double k = (1 - r) / denominator;
      if (k > 0.01 && k < 100) return k;
    }
  return kImageCostRatio;
}

std::string describe_record(const BuildTimeRecord& record) {
  return record.recipe + " " + record.ref + " for " + record.arch_list + " (" + std::to_string(record.code_images) +
         " image" + (record.code_images == 1 ? "" : "s") + ", " + std::to_string(record.parallelism) + " jobs, " +
         format_duration(record.wall_seconds) + (record.warm ? ", warm" : "") +
         (record.finished_at.empty() ? "" : ", " + record.finished_at) + ")";
}

// One earlier build's compile steps, rescaled: images, then slots.
double scaled_span(const BuildTimeRecord& from, const ForecastRequest& to, double image_ratio) {
  double nvcc = from.nvcc_seconds * (1 + image_ratio * serial_images(to.code_images, to.nvcc_threads)) /
                (1 + image_ratio * serial_images(from.code_images, from.nvcc_threads));
  double work_before = from.nvcc_seconds + from.other_seconds;
  double work = nvcc + from.other_seconds;
  unsigned slots_before = slots(from.parallelism, from.cores);
  unsigned slots_now = slots(to.parallelism, to.cores);
  double utilization = 1;
  if (from.span_seconds > 0 && work_before > 0)
    utilization = std::clamp(work_before / (from.span_seconds * slots_before), 0.05, 1.0);
  // Fewer slots are kept busier; more slots may find no more to run at once.
  if (slots_now < slots_before) utilization = std::min(1.0, utilization * slots_before / slots_now);
  return work / (slots_now * utilization);
}

}  // namespace

BuildForecast forecast_build_time(const std::vector<BuildTimeRecord>& history, const ForecastRequest& request) {
  BuildForecast forecast;
  std::vector<const BuildTimeRecord*> same_ref_cold, any_cold;
  const BuildTimeRecord* same_inputs_warm = nullptr;
  bool inputs_built_before = false;
  for (const auto& record : history) {
    if (record.recipe != request.recipe) continue;
    if (!request.source.empty() && record.source != request.source) continue;
    if (!request.compile_inputs.empty() && record.compile_inputs == request.compile_inputs) {
      inputs_built_before = inputs_built_before || record.compile_cache;
      if (record.warm) same_inputs_warm = &record;
    }
    if (record.warm) continue;
    any_cold.push_back(&record);
    if (record.ref == request.ref) same_ref_cold.push_back(&record);
  }
  // Incremental builds ran only what changed: scaled from only when no clean one is known.
  for (auto* list : {&same_ref_cold, &any_cold})
    if (std::any_of(list->begin(), list->end(), [](const auto* record) { return record->clean; }))
      std::erase_if(*list, [](const auto* record) { return !record->clean; });
  const bool warm = request.compile_cache && inputs_built_before;
  forecast.warm = warm;
  if (warm && same_inputs_warm) {
    const auto& from = *same_inputs_warm;
    double span = from.span_seconds * slots(from.parallelism, from.cores) / slots(request.parallelism, request.cores);
    forecast.seconds = from.serial_seconds + span;
    forecast.from_history = true;
    forecast.basis = "from the warm build of the same compile inputs: " + describe_record(from);
    return forecast;
  }
  const auto& pool = same_ref_cold.empty() ? any_cold : same_ref_cold;
  if (!pool.empty()) {
    const auto& from = *pool.back();                 // the newest
    double ratio = image_cost_ratio(same_ref_cold);  // another ref's kernels may weigh otherwise
    double span = scaled_span(from, request, ratio);
    if (warm) span *= kWarmShare;
    forecast.seconds = from.serial_seconds + span;
    forecast.from_history = true;
    forecast.basis = std::string("scaled from ") + (same_ref_cold.empty() ? "a build of another ref: " : "") +
                     describe_record(from) + (from.clean ? "" : ", an incremental build") +
                     (warm ? "; the compile cache holds these inputs" : "") +
                     (request.clean ? "" : "; the work tree holds an earlier build, so it may take less");
    return forecast;
  }
  unsigned cores = slots(request.parallelism, request.cores);
  if (request.estimate && request.estimate->core_hours > 0) {
    const auto& estimate = *request.estimate;
    double core_hours = estimate.core_hours +
                        estimate.core_hours_per_image *
                            static_cast<double>(request.code_images > 0 ? request.code_images - 1 : 0);
    if (warm) core_hours *= kWarmShare;
    forecast.seconds = core_hours * 3600 / cores;
    char text[160];
    std::snprintf(text, sizeof text,
                  "no history: about %.1f hours on %u cores (the recipe's estimate, %.1f core-hours)",
                  *forecast.seconds / 3600, cores, core_hours);
    forecast.basis = text;
    return forecast;
  }
  forecast.basis = "no history and no [estimate] in the recipe: this build records one";
  return forecast;
}

}  // namespace archbuild
