#include "arch/nvcc_arch_flags.h"

#include <algorithm>

#include "core/strings.h"

namespace archbuild {

std::string NvccTarget::name() const {
  return (ptx ? "compute_" : "sm_") + std::to_string(cc.number()) + variant_suffix(variant);
}

std::optional<NvccTarget> NvccTarget::parse(std::string_view name) {
  NvccTarget target;
  if (name.starts_with("sm_")) {
    name.remove_prefix(3);
  } else if (name.starts_with("compute_")) {
    name.remove_prefix(8);
    target.ptx = true;
  } else {
    return std::nullopt;
  }
  if (!name.empty() && (name.back() == 'a' || name.back() == 'f')) {
    target.variant = name.back() == 'a' ? ArchVariant::arch_specific : ArchVariant::family_specific;
    name.remove_suffix(1);
  }
  auto cc = ComputeCapability::parse_digits(name);
  if (!cc) return std::nullopt;
  target.cc = *cc;
  return target;
}

std::vector<NvccTarget> nvcc_targets(const ArchList& list) {
  std::vector<NvccTarget> targets;
  for (const auto& target : list.targets()) {
    if (target.sass) targets.push_back({target.cc, target.variant, false});
    if (target.ptx) targets.push_back({target.cc, target.variant, true});
  }
  std::sort(targets.begin(), targets.end());
  return targets;
}

std::string format_nvcc_targets(const std::vector<NvccTarget>& targets, std::string_view separator) {
  std::vector<std::string> names;
  for (const auto& target : targets) names.push_back(target.name());
  return join(names, separator);
}

std::optional<std::vector<NvccTarget>> parse_nvcc_targets(std::string_view text) {
  std::vector<NvccTarget> targets;
  for (const auto& name : split_any(text, ";, ")) {
    auto target = NvccTarget::parse(name);
    if (!target) return std::nullopt;
    targets.push_back(*target);
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  return targets;
}

std::string cmake_cuda_architectures(const ArchList& list) {
  std::vector<std::string> items;
  for (const auto& target : list.targets()) {
    const std::string number = std::to_string(target.cc.number()) + variant_suffix(target.variant);
    items.push_back(number + (target.sass && target.ptx ? "" : target.sass ? "-real" : "-virtual"));
  }
  return join(items, ";");
}

namespace {

enum class FlagKind { none, gencode, arch, code };

// "-gencode", "-gencode=V", "--generate-code", ...: which target flag an
// argument is, and its value when joined with '='.
FlagKind target_flag(std::string_view arg, std::optional<std::string_view>& joined) {
  static constexpr std::pair<std::string_view, FlagKind> names[] = {{"-gencode", FlagKind::gencode},
                                                                    {"--generate-code", FlagKind::gencode},
                                                                    {"-arch", FlagKind::arch},
                                                                    {"--gpu-architecture", FlagKind::arch},
                                                                    {"-code", FlagKind::code},
                                                                    {"--gpu-code", FlagKind::code}};
  for (const auto& [name, kind] : names) {
    if (arg == name) {
      joined.reset();
      return kind;
    }
    if (arg.size() > name.size() && arg.starts_with(name) && arg[name.size()] == '=') {
      joined = arg.substr(name.size() + 1);
      return kind;
    }
  }
  return FlagKind::none;
}

// What the command's target flags ask for; nullopt when a value is not understood.
struct Parsed {
  std::vector<NvccTarget> targets;
  bool has_flags = false;
  bool open_ended = false;  // -arch=native|all|all-major
  std::vector<std::string> other_args;
};

bool add_names(std::string_view list, std::vector<NvccTarget>& out) {
  for (const auto& name : split_any(list, ",[]\"' ")) {
    auto target = NvccTarget::parse(name);
    if (!target) return false;
    out.push_back(*target);
  }
  return true;
}

std::optional<Parsed> parse_targets(const std::vector<std::string>& args) {
  Parsed parsed;
  std::vector<std::string> arch_values, code_values;
  for (size_t i = 0; i < args.size(); ++i) {
    std::optional<std::string_view> joined;
    auto kind = target_flag(args[i], joined);
    if (kind == FlagKind::none) {
      parsed.other_args.push_back(args[i]);
      continue;
    }
    parsed.has_flags = true;
    std::string value;
    if (joined) {
      value = std::string(*joined);
    } else {
      if (i + 1 >= args.size()) return std::nullopt;
      value = args[++i];
    }
    if (kind == FlagKind::gencode) {
      // arch=compute_80,code=sm_80   arch=compute_80,code=[sm_80,compute_80]
      auto code_at = value.find("code=");
      if (!value.starts_with("arch=") || code_at == std::string::npos) return std::nullopt;
      if (!add_names(std::string_view(value).substr(code_at + 5), parsed.targets)) return std::nullopt;
    } else if (kind == FlagKind::arch) {
      arch_values.push_back(value);
    } else {
      code_values.push_back(value);
    }
  }
  for (const auto& value : arch_values) {
    if (value == "native" || value == "all" || value == "all-major") {
      parsed.open_ended = true;
      continue;
    }
    std::vector<NvccTarget> named;
    if (!add_names(value, named)) return std::nullopt;
    if (!code_values.empty()) continue;  // -code says which images; -arch only the virtual arch
    for (auto target : named) {
      // -arch=sm_XY is -arch=compute_XY -code=sm_XY,compute_XY
      parsed.targets.push_back({target.cc, target.variant, false});
      parsed.targets.push_back({target.cc, target.variant, true});
    }
  }
  for (const auto& value : code_values)
    if (!add_names(value, parsed.targets)) return std::nullopt;
  std::sort(parsed.targets.begin(), parsed.targets.end());
  parsed.targets.erase(std::unique(parsed.targets.begin(), parsed.targets.end()), parsed.targets.end());
  return parsed;
}

// Whether the command compiles device code (so nvcc would pick a default
// arch when no target flag is given).
bool compiles_device_code(const std::vector<std::string>& args) {
  bool mode = false, cuda_input = false;
  for (const auto& arg : args) {
    if (arg == "-c" || arg == "--compile" || arg == "-dc" || arg == "--device-c" || arg == "-dlink" ||
        arg == "--device-link" || arg == "-cubin" || arg == "-ptx" || arg == "-fatbin")
      mode = true;
    if (arg.ends_with(".cu")) cuda_input = true;
  }
  return mode && (cuda_input || std::find(args.begin(), args.end(), "-dlink") != args.end() ||
                  std::find(args.begin(), args.end(), "--device-link") != args.end());
}

std::vector<std::string> gencode_args(const std::vector<NvccTarget>& targets) {
  std::vector<std::string> out;
  for (const auto& target : targets) {
    NvccTarget virtual_arch = target;
    virtual_arch.ptx = true;
    out.push_back("-gencode=arch=" + virtual_arch.name() + ",code=" + target.name());
  }
  return out;
}

}  // namespace

NvccRewrite enforce_nvcc_targets(const std::vector<std::string>& args, const std::vector<NvccTarget>& asked) {
  NvccRewrite rewrite;
  rewrite.args = args;
  auto parsed = parse_targets(args);
  if (!parsed) {
    rewrite.kind = NvccRewrite::Kind::left_as_written;
    rewrite.reason = "its target flags could not be read";
    return rewrite;
  }
  if (!parsed->has_flags && !compiles_device_code(args)) return rewrite;  // nothing to enforce
  rewrite.before = parsed->targets;
  // -ptx and -cubin write one image for one arch: a list of targets is an
  // error there, so such a call (a project's own PTX or cubin step) is kept.
  for (const char* single : {"-ptx", "--ptx", "-cubin", "--cubin"})
    if (std::find(args.begin(), args.end(), single) != args.end()) {
      rewrite.kind = NvccRewrite::Kind::left_as_written;
      rewrite.reason = std::string("a ") + single + " call makes one image for one arch";
      return rewrite;
    }
  const auto asked_cc = [&](const NvccTarget& target) {
    return std::any_of(asked.begin(), asked.end(), [&](const NvccTarget& a) { return a.cc == target.cc; });
  };
  const bool specialised = !parsed->targets.empty() && !parsed->open_ended &&
                           std::all_of(parsed->targets.begin(), parsed->targets.end(),
                                       [](const NvccTarget& target) { return target.variant != ArchVariant::plain; });
  std::vector<NvccTarget> result;
  if (specialised) {
    for (const auto& target : parsed->targets)
      if (asked_cc(target)) result.push_back(target);
    if (result.empty()) {
      rewrite.kind = NvccRewrite::Kind::left_as_written;
      rewrite.reason = "a unit only for " + format_nvcc_targets(parsed->targets, ",") + ", none of them asked";
      return rewrite;
    }
  } else {
    result = asked;
    for (const auto& target : parsed->targets)
      if (target.variant != ArchVariant::plain && asked_cc(target)) result.push_back(target);
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  rewrite.after = result;
  if (result == parsed->targets && !parsed->open_ended) return rewrite;  // already what is asked: untouched
  rewrite.kind = NvccRewrite::Kind::rewritten;
  rewrite.args = parsed->other_args;
  for (auto& arg : gencode_args(result)) rewrite.args.push_back(std::move(arg));
  return rewrite;
}

SplitFlags split_target_flags(std::string_view flags) {
  SplitFlags split;
  auto words = split_any(flags, " \t\n");
  std::vector<std::string> rest;
  for (size_t i = 0; i < words.size(); ++i) {
    std::optional<std::string_view> joined;
    if (target_flag(words[i], joined) == FlagKind::none) {
      rest.push_back(words[i]);
      continue;
    }
    split.target_flags.push_back(words[i]);
    if (!joined && i + 1 < words.size()) split.target_flags.push_back(words[++i]);
  }
  split.rest = join(rest, " ");
  return split;
}

}  // namespace archbuild
