// Helpers shared by unit tests of several folders.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arch/arch_target.h"
#include "core/error.h"
#include "core/exit_code.h"
#include "toolchain/toolkit_facts.h"

namespace archbuild {

// An arch list of these targets.
inline ArchList arch_list_of(std::initializer_list<ArchTarget> targets) {
  ArchList list;
  for (const auto& target : targets) list.add(target);
  return list;
}

// The code of the UserError `fn` throws; success when it throws none.
inline ExitCode code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.code();
  }
  return ExitCode::success;
}

// The toolkit table shipped in toolchains/.
inline ToolkitTable table() { return ToolkitTable::load(ARCHBUILD_SOURCE_DIR "/toolchains"); }

// A fresh directory for one test, removed with it.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name = "archbuild-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (name + "-XXXXXX")).string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

inline void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// The names in `dir`, sorted; none when it cannot be read.
inline std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The message of the bad-input error `action` throws (a test failure if it
// throws none, or another kind).
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace archbuild
