#include "arch/arch_resolver.h"

#include <algorithm>

#include "arch/compat.h"
#include "core/error.h"
#include "core/strings.h"

namespace archbuild {

std::string explain_untargetable(const ArchTarget& target, const CudaTargets& toolkit,
                                 const std::vector<CudaTargets>& releases) {
  const CudaTargets* first_newer = nullptr;
  const CudaTargets* last_older = nullptr;
  for (const auto& facts : releases) {
    if (!facts.can_target(target.cc, target.variant)) continue;
    if (facts.version > toolkit.version && !first_newer) first_newer = &facts;
    if (facts.version < toolkit.version) last_older = &facts;
  }
  std::string text = "CUDA " + toolkit.version.str() + " cannot target " + target.gpu_code_name();
  if (first_newer)
    text += "; it needs CUDA " + first_newer->version.str() + " or newer";
  else if (last_older)
    text += "; the last CUDA that can is " + last_older->version.str() + " (use --cuda " + last_older->version.str() +
            " with that toolkit installed)";
  // A newer CUDA's name for a GPU this one knows by its older name.
  for (const auto& facts : releases)
    if (facts.version > toolkit.version)
      for (const auto& rename : facts.renamed)
        if (rename.to == target.cc && toolkit.can_target(rename.from, target.variant))
          text += "; CUDA " + toolkit.version.str() + " calls that GPU (" + rename.gpu + ") " + rename.from.dotted() +
                  ": --arch " + rename.from.dotted() + " builds its code for a CUDA " +
                  std::to_string(toolkit.version.major) + " driver, under which it reports " + rename.from.dotted();
  return text;
}

namespace {

// The name this toolkit gives a GPU that `cc` names in an older CUDA.
std::optional<CudaTargets::Rename> toolkit_name_for(ComputeCapability cc, ArchVariant variant,
                                                    const CudaTargets& toolkit,
                                                    const std::vector<CudaTargets>& releases) {
  for (const auto& facts : releases)
    if (facts.version <= toolkit.version)
      for (const auto& rename : facts.renamed)
        if (rename.from == cc && toolkit.can_target(rename.to, variant)) return rename;
  return std::nullopt;
}

struct ErrorCollector {
  std::vector<std::string> malformed;     // bad input
  std::vector<std::string> untargetable;  // environment
};

void add_checked(ResolvedArchs& out, ErrorCollector& errors, const std::string& item_text, ArchTarget target,
                 const ArchResolveInputs& in) {
  // An older name of a GPU this toolkit names anew builds the new name: the
  // code runs under this toolkit's drivers, where the GPU reports that CC.
  if (!in.toolkit->can_target(target.cc, target.variant))
    if (auto rename = toolkit_name_for(target.cc, target.variant, *in.toolkit, in.releases)) {
      out.notes.push_back("arch item '" + item_text + "': CUDA " + in.toolkit->version.str() + " calls " + rename->gpu +
                          " " + rename->to.dotted() + ", not " + rename->from.dotted() + ": building " +
                          ArchTarget{rename->to, target.variant, true, false}.gpu_code_name());
      target.cc = rename->to;
    }
  if (in.names && !in.names->accepts(target)) {
    errors.malformed.push_back("arch item '" + item_text + "': " + in.names->consumer + " does not accept " +
                               target.canonical() + " (it raises \"ValueError: Unknown CUDA arch\"); it takes " +
                               join(*in.names->accepted, " "));
    return;
  }
  if (!in.toolkit->can_target(target.cc, target.variant)) {
    bool known = std::any_of(in.releases.begin(), in.releases.end(),
                             [&](const CudaTargets& release) { return release.can_target(target.cc, target.variant); });
    if (!known)
      errors.malformed.push_back("arch item '" + item_text + "': " + target.gpu_code_name() +
                                 " is not an architecture any known CUDA toolkit can target");
    else
      errors.untargetable.push_back("arch item '" + item_text +
                                    "': " + explain_untargetable(target, *in.toolkit, in.releases));
    return;
  }
  out.list.add(target);
}

// A visible GPU's own CC; where this toolkit cannot target it, the newest
// CC of the same family it can whose SASS runs there (CUDA 12.8 has no
// sm_121, and GB10's 12.1 runs sm_120 code).
ArchTarget native_target(ComputeCapability device, bool ptx, const ArchResolveInputs& in,
                         std::vector<std::string>& notes) {
  ArchTarget own{device, ArchVariant::plain, true, ptx};
  if (in.toolkit->can_target(device, ArchVariant::plain) ||
      toolkit_name_for(device, ArchVariant::plain, *in.toolkit, in.releases))
    return own;
  const ComputeCapability* best = nullptr;
  for (const auto& cc : in.toolkit->targets)
    if (can_run(KernelImage{KernelImage::Kind::sass, cc, ArchVariant::plain}, device) == RunVerdict::native) best = &cc;
  if (!best) return own;  // add_checked explains
  notes.push_back("native: CUDA " + in.toolkit->version.str() + " cannot target " + own.gpu_code_name() + "; sm_" +
                  std::to_string(best->major) + std::to_string(best->minor) + " code runs on CC " + device.dotted() +
                  " (same major), so that is built (a CUDA that can target " + own.gpu_code_name() +
                  " builds the GPU's own code)");
  return {*best, ArchVariant::plain, true, ptx};
}

std::string official_list(const ArchResolveInputs& in, std::vector<std::string>& notes) {
  // The list of `facts` for the host's wheels; the nearest older release's
  // where this one has none (PyTorch ships no wheels for every CUDA).
  auto nearest = [&](auto list_of) -> const CudaTargets* {
    if (list_of(*in.toolkit)) return in.toolkit;
    const CudaTargets* found = nullptr;
    for (const auto& facts : in.releases)
      if (facts.version <= in.toolkit->version && list_of(facts)) found = &facts;
    return found;
  };
  auto x86_64 = [](const CudaTargets& facts) { return facts.torch_official_arch_list; };
  auto aarch64 = [](const CudaTargets& facts) { return facts.torch_official_arch_list_aarch64; };
  if (in.machine == "aarch64") {
    if (const auto* facts = nearest(aarch64)) {
      if (facts != in.toolkit)
        notes.push_back("PyTorch ships no CUDA " + in.toolkit->version.str() +
                        " aarch64 wheels: `official` uses its CUDA " + facts->version.str() + " aarch64 list");
      return *facts->torch_official_arch_list_aarch64;
    }
    notes.push_back("PyTorch publishes no aarch64 arch list for CUDA " + in.toolkit->version.str() +
                    " or older: `official` uses its x86-64 list");
  }
  const auto* facts = nearest(x86_64);
  if (!facts)
    fail_environment("PyTorch publishes no official arch list for CUDA " + in.toolkit->version.str() + " or older");
  if (facts != in.toolkit)
    notes.push_back("PyTorch ships no CUDA " + in.toolkit->version.str() + " wheels: `official` uses its CUDA " +
                    facts->version.str() + " list");
  return *facts->torch_official_arch_list;
}

}  // namespace

ResolvedArchs resolve_archs(const std::vector<ArchSpecItem>& items, const ArchResolveInputs& in) {
  ResolvedArchs out;
  ErrorCollector errors;
  for (const auto& item : items) {
    switch (item.kind) {
      case ArchSpecItem::Kind::targets:
        for (const auto& target : item.targets) add_checked(out, errors, item.text, target, in);
        break;
      case ArchSpecItem::Kind::native: {
        if (!in.native_ccs || in.native_ccs->empty())
          fail_environment("arch 'native' needs a visible GPU, and there is none (" + in.no_gpu_reason +
                           "); name the archs instead, e.g. --arch 9.0");
        auto ccs = *in.native_ccs;
        std::sort(ccs.begin(), ccs.end());
        // This machine's SASS in every dialect (archbuild always sets the
        // list, so cpp_extension's PTX for an unset one does not apply);
        // native+PTX asks for PTX of the newest GPU too.
        const bool ptx = item.native_ptx;
        for (size_t i = 0; i < ccs.size(); ++i)
          add_checked(out, errors, item.text + " (GPU of CC " + ccs[i].dotted() + ")",
                      native_target(ccs[i], ptx && i + 1 == ccs.size(), in, out.notes), in);
        if (ptx) out.notes.push_back("native+PTX: the visible GPUs, PTX for the newest");
        break;
      }
      case ArchSpecItem::Kind::all: {
        std::vector<ArchTarget> kept;
        std::vector<std::string> dropped;
        for (const auto& cc : in.toolkit->targets) {
          ArchTarget target{cc, ArchVariant::plain, true, false};
          if (in.names && !in.names->accepts(target))
            dropped.push_back(cc.dotted());
          else
            kept.push_back(target);
        }
        if (!kept.empty()) kept.back().ptx = true;
        for (const auto& target : kept) out.list.add(target);
        if (!dropped.empty())
          out.notes.push_back("all: left out " + join(dropped, ", ") + ", which " + in.names->consumer +
                              " does not accept");
        break;
      }
      case ArchSpecItem::Kind::official: {
        std::vector<std::string> dropped;
        for (const auto& sub : parse_arch_spec(official_list(in, out.notes)))
          for (const auto& target : sub.targets) {
            if (in.names && !in.names->accepts(target))
              dropped.push_back(target.canonical());
            else
              add_checked(out, errors, "official", target, in);
          }
        if (!dropped.empty())
          out.notes.push_back("official: left out " + join(dropped, ", ") + ", which " + in.names->consumer +
                              " does not accept");
        break;
      }
    }
  }
  if (!errors.malformed.empty()) fail_bad_input(join(errors.malformed, "\n"));
  if (!errors.untargetable.empty()) fail_environment(join(errors.untargetable, "\n"));
  return out;
}

}  // namespace archbuild
