#pragma once

// The names of archbuild's settings: the config file's keys, and how code
// asks Settings for a value (a misspelt name is a compile error, not a
// lookup that finds nothing). Settings' table gives each its environment
// variable and flag.
namespace archbuild::setting_name {

inline constexpr const char* cache_dir = "cache_dir";
inline constexpr const char* jobs = "jobs";
inline constexpr const char* compiler_launcher = "compiler_launcher";
inline constexpr const char* compiler_cache_remote = "compiler_cache_remote";
inline constexpr const char* compile_cluster = "compile_cluster";
inline constexpr const char* compile_cluster_token_file = "compile_cluster_token_file";
inline constexpr const char* python = "python";
inline constexpr const char* offline = "offline";
inline constexpr const char* signing_key = "signing_key";
inline constexpr const char* require_kernel_launch = "require_kernel_launch";
inline constexpr const char* portable = "portable";
inline constexpr const char* recipe_path = "recipe_path";
inline constexpr const char* test_wheelhouse = "test_wheelhouse";

}  // namespace archbuild::setting_name
