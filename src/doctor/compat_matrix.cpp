#include "doctor/compat_matrix.h"

#include <algorithm>

#include "ui/terminal.h"

namespace archbuild {

namespace {

std::string cell(const std::vector<ArchTarget>& targets, std::optional<CudaVersion> build_cuda,
                 ComputeCapability device, std::optional<CudaVersion> driver_cuda) {
  RunVerdict verdict = best_verdict(targets, device);
  if (verdict != RunVerdict::no_kernel_image && driver_cuda && build_cuda &&
      !driver_runs(verdict, *build_cuda, *driver_cuda))
    return "driver-too-old";
  return to_string(verdict);
}

Style cell_style(const std::string& text) {
  if (text == "native") return Style::green;
  if (text == "ptx-jit") return Style::yellow;
  return Style::red;
}

}  // namespace

CompatMatrix compatibility_matrix(const OfficialBuildTable& official, const std::vector<CachedTorch>& cached,
                                  const std::vector<ComputeCapability>& devices,
                                  std::optional<CudaVersion> driver_cuda) {
  CompatMatrix matrix{devices, driver_cuda, {}};
  for (const auto& build : official.all()) {
    MatrixRow row{"torch " + build.torch + "+" + build.variant(), "official", build.index_url(), {}};
    for (auto device : devices) row.cells.push_back(cell(build.targets, build.cuda, device, driver_cuda));
    matrix.rows.push_back(std::move(row));
  }
  for (const auto& build : cached) {
    MatrixRow row{"torch " + build.version, "archbuild cache", build.install_line, {}};
    for (auto device : devices) row.cells.push_back(cell(build.targets, build.cuda, device, driver_cuda));
    matrix.rows.push_back(std::move(row));
  }
  return matrix;
}

std::string matrix_text(const CompatMatrix& matrix) {
  size_t width = 8;
  for (const auto& row : matrix.rows) width = std::max(width, row.build.size() + 2);
  constexpr size_t column = 17;
  auto pad = [](std::string text, size_t to) {
    if (text.size() < to) text.resize(to, ' ');
    return text;
  };
  std::string text = pad("build", width);
  for (auto device : matrix.devices) text += pad("CC " + device.dotted(), column);
  text += "from\n";
  for (const auto& row : matrix.rows) {
    text += pad(row.build, width);
    for (const auto& value : row.cells) text += paint(pad(value, column), cell_style(value));
    text += row.origin == "official" ? row.install : row.origin;
    text += "\n";
  }
  text += "driver: " +
          (matrix.driver_cuda ? "CUDA " + matrix.driver_cuda->str() : std::string("not known (not judged)")) +
          "; native: SASS for the device; ptx-jit: only PTX, compiled by the driver at first launch\n";
  return text;
}

nlohmann::json matrix_json(const CompatMatrix& matrix) {
  std::vector<std::string> columns;
  for (auto device : matrix.devices) columns.push_back(device.dotted());
  auto rows = nlohmann::json::array();
  for (const auto& row : matrix.rows)
    rows.push_back({{"build", row.build}, {"origin", row.origin}, {"install", row.install}, {"cells", row.cells}});
  return {{"devices", columns},
          {"driver_cuda", matrix.driver_cuda ? nlohmann::json(matrix.driver_cuda->str()) : nlohmann::json(nullptr)},
          {"rows", rows}};
}

}  // namespace archbuild
