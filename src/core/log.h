#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

// archbuild's diagnostic log, over spdlog: what was resolved from where,
// which subprocesses ran, why a fetch was skipped, what a lock waited for.
// It is not the command's output: lines go to stderr as
// "archbuild: verbose: ..." when the terminal level lets them through
// (`-v`, `--log-level`, ARCHBUILD_LOG), and to any DebugLogFile whatever
// that level. Thread-safe: builds of a matrix log from several threads.
//
//   log::verbose("lock {}: waited {:.1f} s", path.string(), seconds);
//
// Arguments are only formatted when some sink wants the line. Every line is
// scrubbed of secrets (core/secrets.h: URL userinfo, remembered values);
// environment values are redacted by name at the call site (redact_env_value).
namespace archbuild::log {

// From least to most detail, like `cmake --log-level`.
enum class Level { error, warning, verbose, debug, trace };

// "error", "warning", "verbose", "debug", "trace" (case-insensitive; "warn"
// and "info" are accepted too); throws UserError(bad_input) naming the bad
// value and the valid names.
Level level_from_name(std::string_view name);
std::string_view level_name(Level level);
// -v, -vv, -vvv (0: warning).
Level level_from_verbosity(int count);

// The level of the stderr lines; warning until set.
void set_terminal_level(Level level);
Level terminal_level();

// True when a line at `level` reaches some sink (terminal or file): for
// call sites that would do real work to assemble a message.
bool enabled(Level level);

// One line, unformatted (scrubbed of secrets here too).
void write(Level level, std::string_view message);

template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::error, format, std::forward<Args>(args)...);
}
template <typename... Args>
void warning(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::warning, format, std::forward<Args>(args)...);
}
template <typename... Args>
void verbose(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::verbose, format, std::forward<Args>(args)...);
}
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::debug, format, std::forward<Args>(args)...);
}
template <typename... Args>
void trace(fmt::format_string<Args...> format, Args&&... args) {
  at(Level::trace, format, std::forward<Args>(args)...);
}

// Every line at debug level and above (trace too when the terminal is at
// trace) into `path`, created or truncated (never through a symbolic link),
// each line with its time and thread, for as long as the object lives,
// whatever the terminal level. Several may be open at once. With
// `this_thread`, only lines logged by the thread that made it go in (one
// build of a matrix among others running in threads); the default takes
// every thread's (a build's helper threads too). Throws
// std::filesystem::filesystem_error naming the path when it cannot be made.
class DebugLogFile {
 public:
  enum class Threads { all, this_thread };
  explicit DebugLogFile(const std::filesystem::path& path, Threads threads = Threads::all);
  ~DebugLogFile();
  DebugLogFile(const DebugLogFile&) = delete;
  DebugLogFile& operator=(const DebugLogFile&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::shared_ptr<void> sink_;  // a spdlog sink; spdlog stays out of this header
};

// The value of an environment variable as a log may show it: "<redacted>"
// when secrets::is_secret_name(name), else the value scrubbed.
std::string redact_env_value(std::string_view name, std::string_view value);
// argv as a shell would take it back (quoted where needed), redacted.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace archbuild::log
