#include "validate/static_validation.h"

#include <algorithm>

#include "arch/nvcc_arch_flags.h"
#include "binary/binary_walker.h"

namespace archbuild {

nlohmann::json StaticValidation::to_json() const {
  auto gap_list = nlohmann::json::array();
  for (const auto& gap : gaps)
    gap_list.push_back({{"file", gap.file}, {"target", gap.target}, {"missing", gap.missing}});
  auto libs = nlohmann::json::array();
  for (const auto& lib : libraries) {
    nlohmann::json sass = nlohmann::json::object(), ptx = nlohmann::json::object();
    for (const auto& [arch, count] : lib.sass_counts()) sass[arch] = count;
    for (const auto& [arch, count] : lib.ptx_counts()) ptx[arch] = count;
    libs.push_back({{"file", lib.path}, {"sass", sass}, {"ptx", ptx}});
  }
  return {{"ok", ok()},
          {"record", {{"ok", record.ok()}, {"files_checked", record.files_checked}, {"errors", record.errors}}},
          {"cuda_libraries", libs},
          {"gaps", gap_list},
          {"extras",
           [this] {
             auto list = nlohmann::json::array();
             for (const auto& extra : extras) list.push_back({{"file", extra.file}, {"image", extra.target}});
             return list;
           }()},
          {"unreadable", unreadable},
          {"no_cuda_hint", no_cuda_hint}};
}

StaticValidation validate_wheel_static(const std::filesystem::path& wheel, const ArchList& targets,
                                       bool allow_extra_archs) {
  StaticValidation result;
  result.record = verify_record(wheel);
  walk_binaries(wheel, {}, [&](const BinaryInventory& inventory) {
    if (inventory.error) {
      result.unreadable.push_back(inventory.path + ": " + *inventory.error);
      return;
    }
    if (!inventory.has_cuda_code()) return;
    result.libraries.push_back(inventory);
  });
  for (const auto& library : result.libraries) {
    std::string member = library.path.substr(library.path.find('!') + 1);
    for (const auto& target : targets.targets()) {
      bool native = false, jit = false;
      for (const auto& entry : library.entries) {
        if (!library.is_loadable(entry)) continue;
        auto verdict = can_run(entry.image, target.cc);
        // an arch-specific target (9.0a) needs that exact image
        bool right_variant = target.variant == ArchVariant::plain || entry.image.variant == target.variant;
        if (entry.image.kind == KernelImage::Kind::sass && verdict == RunVerdict::native && right_variant)
          native = true;
        if (entry.image.kind == KernelImage::Kind::ptx && verdict == RunVerdict::ptx_jit) jit = true;
      }
      if (target.sass && !native)
        result.gaps.push_back({member, target.canonical(),
                               "SASS that runs natively on " + target.cc.dotted() + variant_suffix(target.variant)});
      if (target.ptx && !jit)
        result.gaps.push_back({member, target.canonical(), "PTX that JIT-compiles for " + target.cc.dotted()});
    }
    if (allow_extra_archs) continue;
    // A variant of an asked compute capability (a unit's own sm_90a beside a
    // 9.0 build) runs on the GPUs the label names; anything else does not.
    auto asked = [&](const KernelImage& image) {
      for (const auto& target : targets.targets())
        if (target.cc == image.cc && (image.kind == KernelImage::Kind::sass ? target.sass : target.ptx)) return true;
      return false;
    };
    std::vector<std::string> seen;
    for (const auto& entry : library.entries) {
      if (!library.is_loadable(entry) || asked(entry.image)) continue;
      const auto name = entry.image.name();
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
      seen.push_back(name);
      result.extras.push_back({member, name, "not asked"});
    }
  }
  return result;
}

ArchList archs_in_wheel(const std::filesystem::path& wheel) {
  ArchList list;
  walk_binaries(wheel, {}, [&](const BinaryInventory& inventory) {
    if (inventory.error || !inventory.has_cuda_code()) return;
    for (const auto& [name, count] : inventory.sass_counts())
      if (auto target = NvccTarget::parse(name)) list.add({target->cc, target->variant, true, false});
    for (const auto& [name, count] : inventory.ptx_counts())
      if (auto target = NvccTarget::parse(name)) list.add({target->cc, target->variant, false, true});
  });
  return list;
}

}  // namespace archbuild
