#include "arch/arch_dialect.h"

#include "core/error.h"
#include "core/strings.h"

namespace archbuild {

std::optional<ArchDialect> parse_arch_dialect(std::string_view text) {
  if (text == "cmake") return ArchDialect::cmake;
  if (text == "extension") return ArchDialect::extension;
  return std::nullopt;
}

std::string to_string(ArchDialect dialect) { return dialect == ArchDialect::cmake ? "cmake" : "extension"; }

std::string format_arch_list(const ArchList& list, ArchDialect dialect) {
  std::vector<std::string> items;
  std::vector<std::string> problems;
  for (const auto& target : list.targets()) {
    if (!target.sass) {
      problems.push_back(target.canonical() + ": TORCH_CUDA_ARCH_LIST has no PTX-only form; use " + target.cc.dotted() +
                         variant_suffix(target.variant) + "+PTX");
      continue;
    }
    if (dialect == ArchDialect::extension && target.variant == ArchVariant::family_specific) {
      problems.push_back(target.canonical() + ": torch.utils.cpp_extension rejects family (f) targets; use " +
                         target.cc.dotted() + " or " + target.cc.dotted() + "a");
      continue;
    }
    items.push_back(target.canonical());
  }
  if (!problems.empty())
    fail_bad_input("cannot express in the " + to_string(dialect) + " dialect:\n  " + join(problems, "\n  "));
  return join(items, ";");
}

}  // namespace archbuild
