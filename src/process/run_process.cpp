#include "process/run_process.h"

#include <unistd.h>

#include <cstdlib>
#include <future>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/strings.h"

namespace bp = boost::process;

namespace archbuild {

std::string ProcessResult::describe_status() const { return timed_out ? "timed out" : status.describe(); }

std::mutex& child_launch_mutex() {
  static std::mutex mutex;
  return mutex;
}

void log_child_started(int pid, const std::vector<std::string>& argv, const std::filesystem::path* working_dir,
                       const std::map<std::string, std::optional<std::string>>& env, const std::string& note) {
  if (!log::enabled(log::Level::verbose)) return;
  std::string where = working_dir ? "in " + working_dir->string() : "";
  if (!note.empty()) where += (where.empty() ? "" : "; ") + note;
  log::verbose("run [{}]: {}{}", pid, log::command_line(argv), where.empty() ? "" : " (" + where + ")");
  // Only what differs from archbuild's own environment: the names, then (at debug) the values.
  std::vector<std::string> set, unset, values;
  for (const auto& [name, value] : env) {
    const char* was = std::getenv(name.c_str());
    if (value ? (was && *value == was) : !was) continue;
    (value ? set : unset).push_back(name);
    if (value)
      values.push_back(name + "=" + log::redact_env_value(name, *value) +
                       (was ? " (was " + log::redact_env_value(name, was) + ")" : " (new)"));
    else
      values.push_back("unset " + name + " (was " + log::redact_env_value(name, was) + ")");
  }
  if (set.empty() && unset.empty()) return;
  log::verbose("env [{}]: {}{}{}", pid, set.empty() ? "" : "set " + join(set, " "),
               !set.empty() && !unset.empty() ? "; " : "", unset.empty() ? "" : "unset " + join(unset, " "));
  for (const auto& line : values) log::debug("env [{}]: {}", pid, line);
}

void log_child_finished(int pid, const std::string& argv0, const std::string& how,
                        std::chrono::steady_clock::duration took) {
  log::verbose("done [{}]: {} after {:.2f} s: {}", pid, how, std::chrono::duration<double>(took).count(),
               std::filesystem::path(argv0).filename().string());
}

std::optional<std::filesystem::path> find_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return std::filesystem::path(program);
    return std::nullopt;
  }
  auto found = bp::search_path(program);
  if (found.empty()) return std::nullopt;
  return std::filesystem::path(found.string());
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw std::logic_error("run_process: empty argv");
  auto program = find_on_path(argv[0]);
  if (!program) fail_environment("cannot run '" + argv[0] + "': not found or not executable");

  bp::environment env = boost::this_process::environment();
  for (const auto& [name, value] : options.env_overrides) {
    if (value)
      env[name] = *value;
    else
      env.erase(name);
  }
  std::vector<std::string> args(argv.begin() + 1, argv.end());

  boost::asio::io_context io;
  std::future<std::string> out, err;
  ProcessResult result;
  int pid = 0;
  const auto started_at = std::chrono::steady_clock::now();
  try {
    std::unique_lock launching(child_launch_mutex());
    bp::child child(
        bp::exe = program->string(), bp::args = args, bp::env = env,
        bp::start_dir = options.working_dir ? options.working_dir->string() : std::filesystem::current_path().string(),
        bp::std_out > out, bp::std_err > err, bp::std_in < bp::null, io,
        // its own group, so that archbuild stopped by a signal stops it and its children too
        bp::extend::on_exec_setup = [](auto&) { ::setpgid(0, 0); });
    ::setpgid(child.id(), child.id());  // also from here: no window where the group does not exist
    register_child_group(child.id());
    launching.unlock();
    pid = child.id();
    std::vector<std::string> shown = argv;
    shown[0] = program->string();
    log_child_started(pid, shown, options.working_dir ? &*options.working_dir : nullptr, options.env_overrides);
    boost::asio::steady_timer timer(io);
    if (options.timeout) {
      timer.expires_after(*options.timeout);
      timer.async_wait([&](const boost::system::error_code& ec) {
        if (!ec && child.running()) {
          result.timed_out = true;
          ::kill(-child.id(), SIGKILL);  // the whole group: nvcc leaves cicc and ptxas behind otherwise
        }
      });
    }
    auto ready = [](std::future<std::string>& f) {
      return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    };
    // Both pipes are read by asio until they close; the timer may fire meanwhile.
    while (!(ready(out) && ready(err))) {
      if (io.run_one() == 0) break;
    }
    timer.cancel();
    child.wait();
    unregister_child_group(child.id());
    result.status = ExitStatus::from_wait_status(child.native_exit_code());
  } catch (const bp::process_error& e) {
    fail_environment("cannot run '" + argv[0] + "': " + e.what());
  }
  result.out = out.get();
  result.err = err.get();
  log_child_finished(pid, argv[0], result.describe_status(), std::chrono::steady_clock::now() - started_at);
  if (log::enabled(log::Level::trace)) {
    // What it printed, cut short: enough to see a version banner or an error.
    for (const auto& [stream, text] : {std::pair{"stdout", &result.out}, std::pair{"stderr", &result.err}}) {
      if (options.output_is_secret && text == &result.out) {
        log::trace("{} [{}]: ({} bytes, a secret: not shown)", stream, pid, text->size());
        continue;
      }
      const auto lines = split_any(*text, "\n");
      for (size_t i = 0; i < lines.size() && i < 40; ++i) log::trace("{} [{}]: {}", stream, pid, lines[i]);
      if (lines.size() > 40) log::trace("{} [{}]: ({} more lines)", stream, pid, lines.size() - 40);
    }
  }
  return result;
}

}  // namespace archbuild
