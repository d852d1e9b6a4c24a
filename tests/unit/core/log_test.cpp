#include "core/log.h"

#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_support.h"

using namespace archbuild;

namespace {

// The terminal level is process-wide: each test leaves it as it found it.
class Log : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = log::terminal_level(); }
  void TearDown() override { log::set_terminal_level(saved_); }

 private:
  log::Level saved_ = log::Level::warning;
};

}  // namespace

TEST_F(Log, LevelNamesRoundTripInAnyCase) {
  for (auto level : {log::Level::error, log::Level::warning, log::Level::verbose, log::Level::debug, log::Level::trace})
    EXPECT_EQ(log::level_from_name(log::level_name(level)), level);
  EXPECT_EQ(log::level_from_name("DEBUG"), log::Level::debug);
  EXPECT_EQ(log::level_from_name("warn"), log::Level::warning);
  EXPECT_EQ(log::level_from_name("info"), log::Level::verbose);
  EXPECT_EQ(log::level_name(log::Level::verbose), "verbose");
}

TEST_F(Log, ABadLevelNameIsBadInputNamingItAndTheValidNames) {
  const auto message = error_of([] { log::level_from_name("nope"); });
  EXPECT_NE(message.find("'nope'"), std::string::npos) << message;
  EXPECT_NE(message.find("error, warning, verbose, debug, trace"), std::string::npos) << message;
  EXPECT_NE(error_of([] { log::level_from_name(""); }).find("''"), std::string::npos);
}

TEST_F(Log, VerbosityCountsMapToLevels) {
  EXPECT_EQ(log::level_from_verbosity(0), log::Level::warning);
  EXPECT_EQ(log::level_from_verbosity(1), log::Level::verbose);
  EXPECT_EQ(log::level_from_verbosity(2), log::Level::debug);
  EXPECT_EQ(log::level_from_verbosity(3), log::Level::trace);
  EXPECT_EQ(log::level_from_verbosity(7), log::Level::trace);
}

TEST_F(Log, TheTerminalShowsOnlyItsLevelWithTheArchbuildPrefix) {
  log::set_terminal_level(log::Level::warning);
  EXPECT_FALSE(log::enabled(log::Level::verbose));
  testing::internal::CaptureStderr();
  log::verbose("hidden {}", 1);
  log::warning("shown {}", 2);
  log::set_terminal_level(log::Level::debug);
  log::debug("two\nlines");
  log::trace("hidden too");
  const auto err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("hidden"), std::string::npos) << err;
  EXPECT_NE(err.find("archbuild: warning: shown 2\n"), std::string::npos) << err;
  EXPECT_NE(err.find("archbuild: debug: two\n"), std::string::npos) << err;
  EXPECT_NE(err.find("archbuild: debug: lines\n"), std::string::npos) << err;
}

TEST_F(Log, ADebugLogFileGetsDebugLinesWhileTheTerminalIsAtWarning) {
  TempDir dir;
  const auto path = dir.path / "archbuild-debug.log";
  log::set_terminal_level(log::Level::warning);
  testing::internal::CaptureStderr();
  {
    log::DebugLogFile file(path);
    EXPECT_TRUE(log::enabled(log::Level::debug));
    EXPECT_FALSE(log::enabled(log::Level::trace));
    log::debug("resolved {} from {}", "jobs", "default");
    log::verbose("run [1]: nvcc --version");
    log::trace("too fine");
  }
  log::debug("after the file closed");
  const auto err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");  // nothing reached the terminal
  EXPECT_FALSE(log::enabled(log::Level::debug));

  const auto text = read(path);
  EXPECT_NE(text.find("debug: resolved jobs from default\n"), std::string::npos) << text;
  EXPECT_NE(text.find("verbose: run [1]: nvcc --version\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("too fine"), std::string::npos) << text;
  EXPECT_EQ(text.find("after the file closed"), std::string::npos) << text;
  // every log line has its time (to the millisecond, with the UTC offset) and thread
  const std::regex stamped(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4} \[\d+\] debug: resolved)");
  EXPECT_TRUE(std::regex_search(text, stamped)) << text;
}

TEST_F(Log, ADebugLogFileTakesTraceWhenTheTerminalDoes) {
  TempDir dir;
  log::set_terminal_level(log::Level::trace);
  testing::internal::CaptureStderr();
  {
    log::DebugLogFile file(dir.path / "debug.log");
    log::trace("finest");
  }
  testing::internal::GetCapturedStderr();
  EXPECT_NE(read(dir.path / "debug.log").find("trace: finest"), std::string::npos);
}

TEST_F(Log, ADebugLogFileOfThisThreadLeavesOtherThreadsOut) {
  TempDir dir;
  log::DebugLogFile mine(dir.path / "mine.log", log::DebugLogFile::Threads::this_thread);
  log::DebugLogFile all(dir.path / "all.log");
  log::debug("from the builder");
  std::thread([] { log::debug("from another build"); }).join();
  const auto mine_text = read(dir.path / "mine.log");
  EXPECT_NE(mine_text.find("from the builder"), std::string::npos) << mine_text;
  EXPECT_EQ(mine_text.find("from another build"), std::string::npos) << mine_text;
  EXPECT_NE(read(dir.path / "all.log").find("from another build"), std::string::npos);
}

TEST_F(Log, ADebugLogFileIsNeverWrittenThroughASymlink) {
  TempDir dir;
  std::filesystem::create_symlink(dir.path / "elsewhere", dir.path / "debug.log");
  EXPECT_THROW(log::DebugLogFile(dir.path / "debug.log"), std::filesystem::filesystem_error);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "elsewhere"));
  EXPECT_THROW(log::DebugLogFile(dir.path / "no-such-dir" / "debug.log"), std::filesystem::filesystem_error);
}

TEST_F(Log, SecretsAreRedactedByNameAndUrlUserinfoEverywhere) {
  EXPECT_EQ(log::redact_env_value("GITHUB_TOKEN", "ghp_abc"), "<redacted>");
  EXPECT_EQ(log::redact_env_value("aws_secret_access_key", "x"), "<redacted>");
  EXPECT_EQ(log::redact_env_value("PIP_PASSWORD", "x"), "<redacted>");
  EXPECT_EQ(log::redact_env_value("ARCHBUILD_SIGNING_KEY", "/keys/k.pem"), "<redacted>");
  EXPECT_EQ(log::redact_env_value("PATH", "/usr/bin:/bin"), "/usr/bin:/bin");
  EXPECT_EQ(log::redact_env_value("PIP_INDEX_URL", "https://user:hunter2@pypi.example/simple"),
            "https://***@pypi.example/simple");

  EXPECT_EQ(log::command_line({"git", "clone", "https://u:t@h/r.git", "two words", "--api-token=abc", "-DX=1"}),
            "git clone 'https://***@h/r.git' 'two words' '--api-token=<redacted>' -DX=1");

  // and whatever a line says, in the file as on the terminal
  TempDir dir;
  {
    log::DebugLogFile file(dir.path / "debug.log");
    log::debug("fetch {}", "https://oauth2:ghp_secret@github.com/x.git");
  }
  const auto text = read(dir.path / "debug.log");
  EXPECT_EQ(text.find("ghp_secret"), std::string::npos) << text;
  EXPECT_NE(text.find("fetch https://***@github.com/x.git"), std::string::npos) << text;
}
