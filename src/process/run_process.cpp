#include "process/run_process.h"

#include <unistd.h>

#include <future>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "core/error.h"
#include "core/interrupt.h"

namespace bp = boost::process;

namespace archbuild {

std::string ProcessResult::describe_status() const { return timed_out ? "timed out" : status.describe(); }

std::mutex& child_launch_mutex() {
  static std::mutex mutex;
  return mutex;
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
  return result;
}

}  // namespace archbuild
