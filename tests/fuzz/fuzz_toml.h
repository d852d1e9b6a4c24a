// Recipe and config files: entry points the libFuzzer target fuzz_toml drives,
// shared with the unit test that replays tests/fuzz/corpus/<target>/ in CI
// (tests/unit/fuzz/fuzz_corpus_test.cpp), so a corpus input runs through
// exactly the code it was found with. The parsers may refuse an input only with
// UserError (exit 2 or 3), which the entry point catches; any other exception,
// a crash or a sanitizer report is a finding.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>

#include "config/user_config.h"
#include "core/error.h"
#include "fuzz_support.h"
#include "recipe/recipe.h"

namespace archbuild::fuzz {

// The two TOML loaders on the same bytes: a recipe file (recipes/NAME.toml,
// named after its `name` so that check passes) and the user config file.
struct TomlLoads {
  bool recipe = false, config = false;  // which loader accepted the file
};

inline TomlLoads load_toml_files(std::span<const uint8_t> bytes, const std::filesystem::path& scratch) {
  TomlLoads loads;
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  // The recipe's `name` must match its file name: take it from the text when
  // it is a plain word, so the loader goes on past that check.
  std::string stem = "fuzz";
  if (auto at = text.find("name = \""); at != std::string::npos) {
    auto end = text.find('"', at + 8);
    auto name = end == std::string::npos ? std::string() : text.substr(at + 8, end - at - 8);
    bool plain = !name.empty() && name.size() < 64;
    for (char c : name) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
    if (plain) stem = name;
  }
  // A data dir whose recipes/tests/ and patches/ are the source tree's, so
  // the seeds' kernel tests and patch files exist and loading goes on past them.
  const auto recipes = scratch / "data" / "recipes";
  if (!std::filesystem::exists(recipes / "tests")) {
    std::filesystem::create_directories(recipes);
    std::filesystem::create_directory_symlink(ARCHBUILD_SOURCE_DIR "/recipes/tests", recipes / "tests");
  }
  for (const auto& entry : std::filesystem::directory_iterator(recipes))
    if (entry.path().extension() == ".toml") std::filesystem::remove(entry.path());
  const auto recipe_file = recipes / (stem + ".toml");
  write_bytes(recipe_file, bytes);
  const std::filesystem::path patches = ARCHBUILD_SOURCE_DIR "/patches";
  try {
    (void)RecipeBook::parse_file(recipe_file, patches);
    loads.recipe = true;
    // As a book of its own: dependencies (only on itself here) and the refs it builds.
    auto book = RecipeBook::load(recipes, patches);
    for (const auto& recipe : book.all())
      for (const char* ref : {"", "v2.9.1", "main"}) {
        try {
          (void)book.resolve(recipe, ref);
        } catch (const UserError&) {
        }
      }
  } catch (const UserError&) {
  }
  const auto config = scratch / "config.toml";
  write_bytes(config, bytes);
  ::setenv("ARCHBUILD_CONFIG", config.c_str(), 1);
  try {
    (void)load_user_config();
    loads.config = true;
  } catch (const UserError&) {
  }
  return loads;
}

}  // namespace archbuild::fuzz
