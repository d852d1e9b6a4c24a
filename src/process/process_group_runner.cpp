#include "process/process_group_runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "process/run_process.h"
#include "process/step_supervisor.h"

namespace bp = boost::process;

namespace archbuild {

std::string GroupRunOutcome::describe() const {
  if (interrupted) return std::string("interrupted by ") + (interrupt_signal == SIGTERM ? "SIGTERM" : "SIGINT");
  if (timed_out) return "timed out";
  return status.describe();
}

namespace {

// One output stream, split into lines as it arrives. Each read is scanned
// once, and a line is kept up to kLongestLine: a child printing hundreds of
// MiB without a newline costs neither memory nor a rescan per read; the
// line is handed on cut, saying how much of it was dropped.
struct LineReader {
  static constexpr size_t kLongestLine = 1 << 20;
  bp::async_pipe pipe;
  bool from_stderr;
  std::array<char, 65536> chunk{};
  std::string pending;
  uint64_t dropped = 0;  // bytes of the pending line beyond kLongestLine
  bool open = true;

  LineReader(boost::asio::io_context& io, bool is_stderr) : pipe(io), from_stderr(is_stderr) {}

  void hand_on(const LineHandler& on_line) {
    if (dropped) pending += " ... (" + std::to_string(dropped) + " more bytes of this line not kept)";
    std::string_view line(pending);
    if (!dropped && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    on_line(line, from_stderr);
    pending.clear();
    dropped = 0;
  }

  void take(std::string_view data, const LineHandler& on_line) {
    while (!data.empty()) {
      const auto newline = data.find('\n');
      const auto piece = data.substr(0, newline);
      const auto room = kLongestLine - std::min(kLongestLine, pending.size());
      pending.append(piece.substr(0, room));
      dropped += piece.size() - std::min(room, piece.size());
      if (newline == std::string_view::npos) return;
      hand_on(on_line);
      data.remove_prefix(newline + 1);
    }
  }

  void start(const LineHandler& on_line) {
    pipe.async_read_some(boost::asio::buffer(chunk), [this, &on_line](const boost::system::error_code& ec, size_t n) {
      if (n > 0) take(std::string_view(chunk.data(), n), on_line);
      if (ec) {
        if (!pending.empty() || dropped) hand_on(on_line);
        open = false;
        return;
      }
      start(on_line);
    });
  }
};

}  // namespace

GroupRunOutcome run_in_process_group(const GroupRunSpec& spec, const LineHandler& on_line, const TickHandler& on_tick) {
  if (spec.argv.empty()) throw std::logic_error("run_in_process_group: empty argv");
  auto program = find_on_path(spec.argv[0]);
  if (!program) fail_environment("cannot run '" + spec.argv[0] + "': not found or not executable");
  const std::filesystem::path command_program = *program;
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  if (spec.contain) {
    args.insert(args.begin(), {kStepSupervisorCommand, "--", program->string()});
    program = std::filesystem::read_symlink("/proc/self/exe");
  }
  bp::environment env = boost::this_process::environment();
  for (const auto& [name, value] : spec.env) env[name] = value;
  env["PWD"] = spec.working_dir.string();

  GroupRunOutcome outcome;
  // SIGINT/SIGTERM are ours from now on, before the child exists.
  InterruptibleScope interruptible;
  auto take_interrupt = [&] {
    if (outcome.interrupted) return false;
    outcome.interrupt_signal = pending_interrupt();
    outcome.interrupted = outcome.interrupt_signal != 0;
    return outcome.interrupted;
  };
  if (take_interrupt()) return outcome;  // stopped before it started: nothing to clean up

  boost::asio::io_context io;
  std::unique_lock launching(child_launch_mutex());  // the pipes below and the fork: see run_process.h
  auto out = std::make_unique<LineReader>(io, false);
  auto err = std::make_unique<LineReader>(io, true);
  std::unique_ptr<bp::child> child;
  try {
    child = std::make_unique<bp::child>(
        bp::exe = program->string(), bp::args = args, bp::env = env, bp::start_dir = spec.working_dir.string(),
        bp::std_out > out->pipe, bp::std_err > err->pipe, bp::std_in < bp::null,
        bp::extend::on_exec_setup = [&spec](auto&) {
          ::setpgid(0, 0);  // a process group of its own
          if (spec.network)
            if (spec.network->enter() != 0) {
              constexpr char message[] = "archbuild: cannot enter the build's network namespace\n";
              [[maybe_unused]] auto ignored = ::write(2, message, sizeof message - 1);
              ::_exit(126);
            }
        });
  } catch (const bp::process_error& e) {
    fail_environment("cannot start '" + spec.argv[0] + "': " + e.what());
  }
  launching.unlock();
  pid_t group = child->id();
  ::setpgid(group, group);  // also from the parent: no window where a kill misses the group
  if (log::enabled(log::Level::verbose)) {
    std::map<std::string, std::optional<std::string>> changes(spec.env.begin(), spec.env.end());
    std::vector<std::string> shown = spec.argv;
    shown[0] = command_program.string();
    log_child_started(group, shown, &spec.working_dir, changes,
                      std::string(spec.contain ? "under archbuild's step supervisor; " : "") +
                          (!spec.network ? ""
                           : spec.network->mode == NetworkIsolation::unavailable
                               ? "network not isolated: no namespace available"
                               : "network: " + NetworkIsolationProbe{spec.network->mode, ""}.describe() +
                                     ", loopback only; " + std::to_string(spec.network->hidden_sockets.size()) +
                                     " host socket files covered"));
  }

  out->start(on_line);
  err->start(on_line);

  bool exited = false;
  int wait_status = 0;
  const auto started_at = std::chrono::steady_clock::now();
  auto exited_at = started_at;
  boost::asio::steady_timer kill_timer(io);
  boost::asio::steady_timer ticker(io);
  auto stop_group = [&] {
    ::kill(-group, SIGTERM);
    kill_timer.expires_after(spec.grace);
    kill_timer.async_wait([&](const boost::system::error_code& timer_ec) {
      if (!timer_ec && !exited) ::kill(-group, SIGKILL);
    });
  };
  std::function<void()> schedule = [&] {
    ticker.expires_after(spec.tick);
    ticker.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      // The handler only recorded the signal; every run in this process stops its own group.
      if (take_interrupt() && !exited && !outcome.timed_out) stop_group();
      if (spec.timeout && !exited && !outcome.timed_out && !outcome.interrupted &&
          std::chrono::steady_clock::now() - started_at > *spec.timeout) {
        outcome.timed_out = true;
        stop_group();
      }
      if (on_tick) on_tick();
      if (!exited) {
        pid_t done = ::waitpid(group, &wait_status, WNOHANG);
        if (done == group) {
          exited = true;
          exited_at = std::chrono::steady_clock::now();
          ::kill(-group, SIGKILL);  // stragglers of the group (orphaned compilers)
        }
      }
      // Done once the child is reaped and both pipes are drained (or, if a
      // stray holds a pipe open despite the group kill, after 2 s).
      bool drained = !out->open && !err->open;
      if (exited && (drained || std::chrono::steady_clock::now() - exited_at > std::chrono::seconds(2))) {
        kill_timer.cancel();
        boost::system::error_code ignored;
        out->pipe.close(ignored);
        err->pipe.close(ignored);
        return;
      }
      schedule();
    });
  };
  schedule();
  io.run();
  child->detach();  // reaped above with waitpid
  outcome.status = ExitStatus::from_wait_status(wait_status);
  log_child_finished(group, spec.argv[0], outcome.describe(), std::chrono::steady_clock::now() - started_at);
  return outcome;
}

}  // namespace archbuild
