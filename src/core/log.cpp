#include "core/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>

#include <spdlog/details/os.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>

#include "core/error.h"
#include "core/secrets.h"
#include "core/strings.h"

namespace archbuild::log {

namespace {

constexpr Level kLevels[] = {Level::error, Level::warning, Level::verbose, Level::debug, Level::trace};

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::error: return spdlog::level::err;
    case Level::warning: return spdlog::level::warn;
    case Level::verbose: return spdlog::level::info;
    case Level::debug: return spdlog::level::debug;
    case Level::trace: return spdlog::level::trace;
  }
  return spdlog::level::warn;
}

std::string_view word(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return "trace";
    case spdlog::level::debug: return "debug";
    case spdlog::level::info: return "verbose";
    case spdlog::level::warn: return "warning";
    default: return "error";
  }
}

// "archbuild: verbose: ..." on stderr, as archbuild's errors and warnings read.
class TerminalSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  TerminalSink() {
    const char* term = std::getenv("TERM");
    interactive_ = isatty(STDERR_FILENO) && !(term && std::strcmp(term, "dumb") == 0);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string line;
    // A live status line (ui/status_line.h) may be on the terminal: the log
    // line replaces it, and it is redrawn on its next update.
    if (interactive_) line += "\r\x1b[K";
    line += "archbuild: ";
    line += word(msg.level);
    line += ": ";
    line.append(msg.payload.data(), msg.payload.size());
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  bool interactive_ = false;
};

// Local time to the millisecond, with its UTC offset: lines of several
// nodes' logs can be put side by side.
std::string timestamp(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm local{};
  localtime_r(&seconds, &local);
  char date[32], zone[8];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &local);
  std::strftime(zone, sizeof zone, "%z", &local);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count() % 1000;
  return fmt::format("{}.{:03}{}", date, millis, zone);
}

class FileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  FileSink(std::FILE* file, std::optional<size_t> only_thread) : file_(file), only_thread_(only_thread) {}
  ~FileSink() override { std::fclose(file_); }
  void write_raw(std::string_view text) {
    std::lock_guard lock(mutex_);
    std::fwrite(text.data(), 1, text.size(), file_);
    std::fflush(file_);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (only_thread_ && msg.thread_id != *only_thread_) return;
    auto line = fmt::format("{} [{}] {}: ", timestamp(msg.time), msg.thread_id, word(msg.level));
    line.append(msg.payload.data(), msg.payload.size());
    line += '\n';
    // Flushed per line: the log matters most when archbuild is killed. A
    // write error (a full disk) is not the build's failure: ignored.
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);
  }
  void flush_() override { std::fflush(file_); }

 private:
  std::FILE* file_;
  std::optional<size_t> only_thread_;
};

struct State {
  std::shared_ptr<TerminalSink> terminal = std::make_shared<TerminalSink>();
  std::shared_ptr<spdlog::sinks::dist_sink_mt> files = std::make_shared<spdlog::sinks::dist_sink_mt>();
  spdlog::logger logger{"archbuild", {terminal, files}};
  std::mutex mutex;  // guards the two below and the levels derived from them
  Level terminal_level = Level::warning;
  int open_files = 0;

  State() {
    files->set_level(spdlog::level::trace);
    update();
  }
  // The logger lets through what the most detailed sink wants.
  void update() {
    auto level = to_spdlog(terminal_level);
    terminal->set_level(level);
    if (open_files > 0) level = std::min(level, spdlog::level::debug);
    logger.set_level(level);
  }
};

// Never destroyed: a line logged while static objects go away still has a logger.
State& state() {
  static State* instance = new State;
  return *instance;
}

}  // namespace

Level level_from_name(std::string_view name) {
  const std::string lower = to_lower(trim(name));
  if (lower == "warn") return Level::warning;
  if (lower == "info") return Level::verbose;
  std::vector<std::string> names;
  for (auto level : kLevels) {
    if (lower == level_name(level)) return level;
    names.emplace_back(level_name(level));
  }
  fail_bad_input("unknown log level '" + std::string(name) + "'; the levels are " + join(names, ", "));
}

std::string_view level_name(Level level) { return word(to_spdlog(level)); }

Level level_from_verbosity(int count) {
  if (count <= 0) return Level::warning;
  if (count == 1) return Level::verbose;
  if (count == 2) return Level::debug;
  return Level::trace;
}

void set_terminal_level(Level level) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.terminal_level = level;
  s.update();
}

Level terminal_level() {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  return s.terminal_level;
}

bool enabled(Level level) { return state().logger.should_log(to_spdlog(level)); }

void write(Level level, std::string_view message) {
  auto& s = state();
  const auto spd_level = to_spdlog(level);
  if (!s.logger.should_log(spd_level)) return;
  const std::string text = terminal_safe(secrets::scrub(message));
  // One log line per line of text, each with its prefix.
  std::string_view rest = text;
  while (true) {
    const auto newline = rest.find('\n');
    s.logger.log(spd_level, rest.substr(0, newline));
    if (newline == std::string_view::npos || newline + 1 == rest.size()) break;
    rest.remove_prefix(newline + 1);
  }
}

DebugLogFile::DebugLogFile(const std::filesystem::path& path, Threads threads) : path_(path) {
  auto fail = [&](int error) {
    throw std::filesystem::filesystem_error("cannot write the debug log", path,
                                            std::error_code(error, std::generic_category()));
  };
  // O_NOFOLLOW: never written through a link; O_NONBLOCK: a FIFO there fails
  // the open (no reader) or the check below, instead of blocking.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) fail(errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    fail(EINVAL);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::FILE* file = ::fdopen(fd, "w");
  if (!file) {
    const int error = errno;
    ::close(fd);
    fail(error);
  }
  auto sink = std::make_shared<FileSink>(file, threads == Threads::this_thread
                                                   ? std::optional(spdlog::details::os::thread_id())
                                                   : std::nullopt);
  sink->write_raw(fmt::format("{} archbuild {} debug log, pid {}\n", timestamp(std::chrono::system_clock::now()),
                              ARCHBUILD_VERSION, ::getpid()));
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.files->add_sink(sink);
  ++s.open_files;
  s.update();
  sink_ = sink;
}

DebugLogFile::~DebugLogFile() {
  auto sink = std::static_pointer_cast<FileSink>(sink_);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  // Once removed (under the distributing sink's lock) no thread writes to it.
  s.files->remove_sink(sink);
  --s.open_files;
  s.update();
}

std::string redact_env_value(std::string_view name, std::string_view value) {
  if (value.empty()) return "";
  if (secrets::is_secret_name(name)) return "<redacted>";
  return secrets::scrub(value);
}

std::string command_line(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const auto& arg : argv) {
    // NAME=VALUE words (env, cmake -D, --opt=) with a secret-looking name.
    std::string word = arg;
    if (auto equals = arg.find('='); equals != std::string::npos && equals > 0) {
      std::string_view name = std::string_view(arg).substr(0, equals);
      if (secrets::is_secret_name(name) && equals + 1 < arg.size()) word = arg.substr(0, equals + 1) + "<redacted>";
    }
    words.push_back(shell_quote(secrets::scrub(word)));
  }
  return join(words, " ");
}

}  // namespace archbuild::log
