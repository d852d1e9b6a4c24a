#include "config/settings.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

using namespace archbuild;

// Precedence: default < config file < ARCHBUILD_* environment < flag; a flag
// left empty (an option the user did not give) does not count.
TEST(Settings, PrecedenceAndEmptyFlags) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-settings-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.toml") << "jobs = 5\ncache_dir = \"/from/file\"\n";
  setenv("ARCHBUILD_CONFIG", (dir / "config.toml").c_str(), 1);
  unsetenv("ARCHBUILD_JOBS");
  unsetenv("ARCHBUILD_CACHE_DIR");
  EXPECT_EQ(Settings::load({{"jobs", ""}}).get("jobs").value, "5");
  EXPECT_NE(Settings::load().get("jobs").origin.find("config file"), std::string::npos);
  setenv("ARCHBUILD_JOBS", "7", 1);
  auto from_env = Settings::load({{"jobs", ""}, {"cache_dir", ""}});
  EXPECT_EQ(from_env.get("jobs").value, "7");
  EXPECT_EQ(from_env.get("jobs").origin, "env ARCHBUILD_JOBS");
  EXPECT_EQ(from_env.get("cache_dir").value, "/from/file");
  auto from_flag = Settings::load({{"jobs", "3"}});
  EXPECT_EQ(from_flag.get("jobs").value, "3");
  EXPECT_EQ(from_flag.get("jobs").origin, "--jobs");
  EXPECT_EQ(from_flag.jobs(), 3u);
  EXPECT_THROW(Settings::load({{"jobs", "many"}}).jobs(), UserError);
  unsetenv("ARCHBUILD_JOBS");
  unsetenv("ARCHBUILD_CONFIG");
  std::filesystem::remove_all(dir);
}

// The cache dir is made where it is missing; a file in its way is the
// setting's fault (exit 2), a place that refuses a directory this machine's (3).
TEST(Settings, TheCacheDirIsMadeOrRefusedWithTheRightExitCode) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-cache-dir-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  unsetenv("ARCHBUILD_CONFIG");
  unsetenv("ARCHBUILD_CACHE_DIR");
  EXPECT_EQ(Settings::load({{"cache_dir", (dir / "a" / "b").string()}}).made_cache_dir(), dir / "a" / "b");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "a" / "b"));
  std::ofstream(dir / "file") << "x";
  try {
    Settings::load({{"cache_dir", (dir / "file" / "c").string()}}).made_cache_dir();
    ADD_FAILURE() << "a file in the way was taken";
  } catch (const UserError& error) {
    EXPECT_EQ(error.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(error.what()).find((dir / "file").string() + " is not a directory"), std::string::npos)
        << error.what();
  }
  if (std::filesystem::is_directory("/proc/self")) {
    try {
      Settings::load({{"cache_dir", "/proc/archbuild-cache"}}).made_cache_dir();
      ADD_FAILURE() << "a directory was made in /proc";
    } catch (const UserError& error) {
      EXPECT_EQ(error.code(), ExitCode::environment);
      EXPECT_NE(std::string(error.what())
                    .find("cannot create the cache dir /proc/archbuild-cache (cache_dir from "
                          "--cache-dir)"),
                std::string::npos)
          << error.what();
    }
  }
  std::filesystem::remove_all(dir);
}
