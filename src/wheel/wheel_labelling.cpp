#include "wheel/wheel_labelling.h"

#include "core/json_text.h"
#include "core/regular_file.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_relabel.h"
#include "wheel/wheel_variant.h"

namespace archbuild {

namespace {

// The same build as a variant wheel: its public version, and
// .dist-info/variant.json naming what it holds, with that file beside it for
// the index; none when a target has no value in NVIDIA's provider (sm_90a).
std::optional<std::filesystem::path> make_variant_wheel(const std::filesystem::path& built, BuildRecord record,
                                                        const ArchList& holds, const CudaVersion& cuda,
                                                        const std::filesystem::path& dir) {
  auto features = nvidia_variant_features(holds, cuda);
  auto name = WheelName::parse(built.filename().string());
  if (!features || !name) return std::nullopt;
  const auto label = variant_label(*features);
  std::filesystem::create_directories(dir);
  const auto copy = dir / built.filename();
  std::filesystem::copy_file(built, copy, std::filesystem::copy_options::overwrite_existing);
  record.version = name->version;
  const auto document = json_text(variants_document({{label, *features}})) + "\n";
  auto rewritten = relabel_wheel(copy, "",
                                 {{BuildRecord::kFileName, json_text(record.to_json()) + "\n"},
                                  {"variant.json", document}});
  const auto target = dir / variant_file_name(rewritten.path.filename().string(), label);
  std::filesystem::rename(rewritten.path, target);
  write_whole_file(target.string() + ".json", document);
  return target;
}

}  // namespace

LabelledWheels label_wheels(const std::vector<std::filesystem::path>& built, const BuildRecord& record,
                            const ArchList& holds, const CudaVersion& cuda, const std::filesystem::path& variants_dir) {
  LabelledWheels out;
  out.label = local_version_label(cuda, holds);
  std::error_code ec;
  std::filesystem::remove_all(variants_dir, ec);  // an earlier build's
  for (const auto& wheel : built) {
    if (auto variant = make_variant_wheel(wheel, record, holds, cuda, variants_dir)) {
      out.variants.push_back(*variant);
      out.notes.push_back(variant->filename().string() + " (variant wheel)");
    } else {
      out.notes.push_back("no variant wheel: " + holds.canonical() +
                          " has an a/f target, which NVIDIA's variant provider has no sm_arch value for");
    }
    auto labelled = record;
    if (auto name = WheelName::parse(wheel.filename().string()))
      labelled.version = version_with_label(name->version, out.label);
    auto relabeled = relabel_wheel(wheel, out.label, {{BuildRecord::kFileName, json_text(labelled.to_json()) + "\n"}});
    out.wheels.push_back(relabeled.path);
    out.notes.push_back(relabeled.path.filename().string());
  }
  return out;
}

}  // namespace archbuild
