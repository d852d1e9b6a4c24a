#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

// The names of a cache key's inputs, as `key.txt` spells them: the one place
// they are written. Prefixed names end with '.' and carry a part after it
// ("source.submodule.third_party/cutlass").
namespace key_name {
inline constexpr std::string_view recipe = "recipe";
inline constexpr std::string_view recipe_sha256 = "recipe.sha256";
inline constexpr std::string_view ref = "ref";
inline constexpr std::string_view arch_list = "arch_list";
inline constexpr std::string_view arch_dialect = "arch_dialect";
inline constexpr std::string_view arch_enforcement = "arch_enforcement";
inline constexpr std::string_view cuda = "cuda";
inline constexpr std::string_view host_compiler = "host_compiler";
inline constexpr std::string_view python_tag = "python_tag";
inline constexpr std::string_view host_machine = "host_machine";  // the host CPU, where not x86_64
inline constexpr std::string_view build_system = "build.system";
inline constexpr std::string_view build_command = "build.command";
inline constexpr std::string_view build_env = "build.env.";  // the recipe's environment
inline constexpr std::string_view extra_env = "env.";        // --env KEY=VALUE
inline constexpr std::string_view source_commit = "source.commit";
inline constexpr std::string_view source_sdist_sha256 = "source.sdist.sha256";
inline constexpr std::string_view source_submodule = "source.submodule.";
inline constexpr std::string_view source_patch = "source.patch.";
inline constexpr std::string_view source_subdirectory = "source.subdirectory";  // the project's dir in the tree
inline constexpr std::string_view source_base_commit = "source.base_commit";    // a working tree's HEAD
inline constexpr std::string_view source_edits = "source.edits";                // its edits' sha256
inline constexpr std::string_view dependency = "dep.";                          // what the build links against
inline constexpr std::string_view build_requirement = "build.requires.";        // installed build tools
inline constexpr std::string_view portable = "portable";  // repaired with these tools (absent: not repaired)
}  // namespace key_name

// The source a key names: commits, never paths.
struct KeySource {
  std::string commit;
  std::optional<std::string> sdist_sha256;        // pypi:NAME==VERSION
  std::map<std::string, std::string> submodules;  // path -> commit
  std::map<std::string, std::string> patches;     // file name -> sha256
  std::string subdirectory;                       // "" for the tree's top
  std::string base_commit, edits_sha256;          // a working tree built as it is on disk
};

// Everything a build's cache key hashes, as typed fields. No machine paths:
// two builders with the same inputs share the key.
struct KeyFields {
  std::string recipe, recipe_sha256, ref, arch_list, arch_dialect;
  bool arch_enforcement = true;
  std::string cuda, host_compiler, python_tag, build_system, build_command;
  std::string host_machine = "x86_64";                    // uname's: the wheel's platform
  std::map<std::string, std::string> build_env;           // the recipe's, before its path placeholders
  std::map<std::string, std::string> extra_env;           // --env
  std::optional<KeySource> source;                        // absent when planning before a checkout
  std::map<std::string, std::string> dependencies;        // "torch" -> what it builds against
  std::map<std::string, std::string> build_requirements;  // "cmake" -> "3.31.2"
  std::string portable;  // the repair's pinned tools ("auditwheel==6.8.2 ..."); "": not repaired
};

// A key's inputs by name: written by `of(fields)` only, read through the
// accessors (the store's entries, provenance, dependency lookup).
class KeyInputs {
 public:
  KeyInputs() = default;
  explicit KeyInputs(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  static KeyInputs of(const KeyFields& fields);
  static KeyInputs parse(const std::string& key_text);

  const std::map<std::string, std::string>& values() const { return values_; }
  std::string get(std::string_view name) const;  // "" when absent
  std::string recipe() const { return get(key_name::recipe); }
  std::string ref() const { return get(key_name::ref); }
  std::string arch_list() const { return get(key_name::arch_list); }
  std::string arch_enforcement() const { return get(key_name::arch_enforcement); }
  std::string cuda() const { return get(key_name::cuda); }
  // The host CPU the build ran on: its wheels are for that platform.
  std::string host_machine() const {
    auto machine = get(key_name::host_machine);
    return machine.empty() ? "x86_64" : machine;  // absent: an x86-64 key
  }
  std::string source_commit() const { return get(key_name::source_commit); }
  std::optional<std::string> sdist_sha256() const;
  std::map<std::string, std::string> submodules() const { return with_prefix(key_name::source_submodule); }
  std::map<std::string, std::string> patches() const { return with_prefix(key_name::source_patch); }
  std::string subdirectory() const { return get(key_name::source_subdirectory); }
  std::map<std::string, std::string> dependencies() const { return with_prefix(key_name::dependency); }
  std::map<std::string, std::string> build_requirements() const { return with_prefix(key_name::build_requirement); }
  std::map<std::string, std::string> extra_env() const { return with_prefix(key_name::extra_env); }

  // --env values may be secrets (a token for --allow-network): what leaves
  // the cache (the wheel's build record, provenance) carries their sha256.
  KeyInputs with_secrets_hashed() const;
  // The inputs but the source's commits and the installed build tools: the
  // same value means a compile cache already holds these compiles, and it is
  // known before a checkout (`archbuild plan`).
  std::string compile_inputs_digest() const;
  // Whether `name` is one of what a source is (commit, sdist, submodule, patch).
  static bool names_source(std::string_view name);

 private:
  std::map<std::string, std::string> with_prefix(std::string_view prefix) const;
  std::map<std::string, std::string> values_;
};

}  // namespace archbuild
