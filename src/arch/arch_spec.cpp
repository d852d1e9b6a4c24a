#include "arch/arch_spec.h"

#include "core/error.h"
#include "core/strings.h"

namespace archbuild {

namespace {

[[noreturn]] void malformed(std::string_view item, std::string_view why) {
  fail_bad_input("arch item '" + std::string(item) + "' is malformed: " + std::string(why) +
                 " (expected e.g. 8.6, 86, sm_86, compute_86, 8.6+PTX, 9.0a, 10.0f, Hopper, "
                 "native, all, official)");
}

// Splits "9.0a" into "9.0" and the variant.
ArchVariant take_variant(std::string& body) {
  if (!body.empty() && (body.back() == 'a' || body.back() == 'A')) {
    body.pop_back();
    return ArchVariant::arch_specific;
  }
  if (!body.empty() && (body.back() == 'f' || body.back() == 'F')) {
    body.pop_back();
    return ArchVariant::family_specific;
  }
  return ArchVariant::plain;
}

}  // namespace

std::vector<ArchTarget> parse_arch_item(std::string_view item, const ArchNames& names) {
  if (auto named = names.expand(item)) return *named;
  std::string body = trim(item);
  bool with_ptx = false;
  if (auto plus = body.find('+'); plus != std::string::npos) {
    if (to_lower(body.substr(plus)) != "+ptx") malformed(item, "the only suffix after '+' is +PTX");
    with_ptx = true;
    body.erase(plus);
  }

  bool ptx_only = false;
  if (starts_with_ci(body, "compute_")) {
    if (with_ptx) malformed(item, "compute_XY is already PTX; drop +PTX");
    ptx_only = true;
    body.erase(0, 8);
  } else if (starts_with_ci(body, "sm_")) {
    body.erase(0, 3);
  }
  ArchVariant variant = take_variant(body);
  if (body.empty()) malformed(item, "no compute capability");
  auto cc = ComputeCapability::parse(body);
  if (!cc) malformed(item, "'" + body + "' is not a compute capability like 8.6 or 86");
  if (ptx_only) return {ArchTarget{*cc, variant, false, true}};
  return {ArchTarget{*cc, variant, true, with_ptx}};
}

ArchList parse_arch_list(std::string_view list) {
  ArchList out;
  for (const auto& word : split_any(list, ";")) {
    const auto lowered = to_lower(word);
    if (lowered.starts_with("native") || lowered == "all" || lowered == "official" || lowered == "auto")
      malformed(word, "a list of targets names no keyword");
    for (const auto& target : parse_arch_item(word)) out.add(target);
  }
  return out;
}

std::vector<ArchSpecItem> parse_arch_spec(std::string_view spec, const ArchNames& names) {
  std::vector<ArchSpecItem> items;
  for (const auto& word : split_any(spec, ";, \t\n")) {
    ArchSpecItem item;
    item.text = word;
    auto lowered = to_lower(word);
    if (lowered == "native" || lowered == "auto" || lowered == "native+ptx") {
      item.kind = ArchSpecItem::Kind::native;
      item.native_ptx = lowered == "native+ptx";
    } else if (lowered == "all") {
      item.kind = ArchSpecItem::Kind::all;
    } else if (lowered == "official") {
      item.kind = ArchSpecItem::Kind::official;
    } else {
      item.targets = parse_arch_item(word, names);
    }
    items.push_back(std::move(item));
  }
  if (items.empty()) fail_bad_input("the arch spec is empty (try --arch native or --arch 9.0)");
  return items;
}

}  // namespace archbuild
