#include "arch/arch_resolver.h"

#include <algorithm>

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
  return text;
}

namespace {

struct ErrorCollector {
  std::vector<std::string> malformed;     // bad input
  std::vector<std::string> untargetable;  // environment
};

void add_checked(ResolvedArchs& out, ErrorCollector& errors, const std::string& item_text, const ArchTarget& target,
                 const ArchResolveInputs& in) {
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

std::string official_list(const ArchResolveInputs& in, std::vector<std::string>& notes) {
  if (in.toolkit->torch_official_arch_list) return *in.toolkit->torch_official_arch_list;
  const CudaTargets* nearest = nullptr;
  for (const auto& facts : in.releases)
    if (facts.version <= in.toolkit->version && facts.torch_official_arch_list) nearest = &facts;
  if (!nearest)
    fail_environment("PyTorch publishes no official arch list for CUDA " + in.toolkit->version.str() + " or older");
  notes.push_back("PyTorch ships no CUDA " + in.toolkit->version.str() + " wheels: `official` uses its CUDA " +
                  nearest->version.str() + " list");
  return *nearest->torch_official_arch_list;
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
        const bool ptx = in.names && in.names->native_with_ptx;
        for (size_t i = 0; i < ccs.size(); ++i)
          add_checked(out, errors, item.text + " (GPU of CC " + ccs[i].dotted() + ")",
                      ArchTarget{ccs[i], ArchVariant::plain, true, ptx && i + 1 == ccs.size()}, in);
        if (ptx)
          out.notes.push_back("native: the visible GPUs, PTX for the newest, as " + in.names->consumer +
                              " reads an unset list");
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
