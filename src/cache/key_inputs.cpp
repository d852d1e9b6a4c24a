#include "cache/key_inputs.h"

#include "cache/cache_key.h"
#include "core/sha256.h"

namespace archbuild {

namespace {
std::string named(std::string_view prefix, const std::string& part) { return std::string(prefix) + part; }
}  // namespace

KeyInputs KeyInputs::of(const KeyFields& in) {
  std::map<std::string, std::string> key;
  key[std::string(key_name::recipe)] = in.recipe;
  key[std::string(key_name::recipe_sha256)] = in.recipe_sha256;
  key[std::string(key_name::ref)] = in.ref;
  key[std::string(key_name::arch_list)] = in.arch_list;
  key[std::string(key_name::arch_dialect)] = in.arch_dialect;
  key[std::string(key_name::arch_enforcement)] = in.arch_enforcement ? "on" : "off";
  key[std::string(key_name::cuda)] = in.cuda;
  key[std::string(key_name::host_compiler)] = in.host_compiler;
  key[std::string(key_name::python_tag)] = in.python_tag;
  // Absent on x86-64, where every key made before other hosts were built on
  // was made, so that those keys stay as they were.
  if (in.host_machine != "x86_64") key[std::string(key_name::host_machine)] = in.host_machine;
  key[std::string(key_name::build_system)] = in.build_system;
  key[std::string(key_name::build_command)] = in.build_command;
  for (const auto& [name, value] : in.build_env) key[named(key_name::build_env, name)] = value;
  for (const auto& [name, value] : in.extra_env) key[named(key_name::extra_env, name)] = value;
  if (in.source) {
    key[std::string(key_name::source_commit)] = in.source->commit;
    if (in.source->sdist_sha256) key[std::string(key_name::source_sdist_sha256)] = *in.source->sdist_sha256;
    for (const auto& [path, commit] : in.source->submodules) key[named(key_name::source_submodule, path)] = commit;
    for (const auto& [file, sha256] : in.source->patches) key[named(key_name::source_patch, file)] = sha256;
    // Absent unless set, so that the keys of builds at a tree's top stay as they were.
    if (!in.source->subdirectory.empty()) key[std::string(key_name::source_subdirectory)] = in.source->subdirectory;
    if (!in.source->edits_sha256.empty()) {
      key[std::string(key_name::source_base_commit)] = in.source->base_commit;
      key[std::string(key_name::source_edits)] = in.source->edits_sha256;
    }
  }
  for (const auto& [name, value] : in.dependencies) key[named(key_name::dependency, name)] = value;
  for (const auto& [name, version] : in.build_requirements) key[named(key_name::build_requirement, name)] = version;
  // Absent unless repaired, so that the keys of builds without --portable stay as they were.
  if (!in.portable.empty()) key[std::string(key_name::portable)] = in.portable;
  return KeyInputs(std::move(key));
}

KeyInputs KeyInputs::parse(const std::string& key_text) { return KeyInputs(parse_key_text(key_text)); }

std::string KeyInputs::get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::string() : it->second;
}

std::optional<std::string> KeyInputs::sdist_sha256() const {
  auto it = values_.find(std::string(key_name::source_sdist_sha256));
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, std::string> KeyInputs::with_prefix(std::string_view prefix) const {
  std::map<std::string, std::string> parts;
  for (auto it = values_.lower_bound(std::string(prefix)); it != values_.end() && it->first.starts_with(prefix); ++it)
    parts[it->first.substr(prefix.size())] = it->second;
  return parts;
}

KeyInputs KeyInputs::with_secrets_hashed() const {
  auto hashed = values_;
  for (auto& [name, value] : hashed)
    if (name.starts_with(key_name::extra_env)) value = "sha256:" + sha256_hex(value);
  return KeyInputs(std::move(hashed));
}

bool KeyInputs::names_source(std::string_view name) { return name.starts_with("source."); }

std::string KeyInputs::compile_inputs_digest() const {
  std::string text;
  for (const auto& [name, value] : values_)
    if (!names_source(name) && !name.starts_with(key_name::build_requirement)) text += name + " " + value + "\n";
  return sha256_hex(text);
}

}  // namespace archbuild
