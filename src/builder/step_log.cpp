#include "builder/step_log.h"

#include <cerrno>
#include <csignal>
#include <fstream>
#include <set>
#include <vector>

#include "process/pid_namespace.h"

namespace archbuild {

namespace {

// "<ms>\t<pid>[:<pid namespace inode>]\t<output>" (older launchers:
// "<ms>\t<output>"); the output path may hold anything but a newline.
std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; fields.size() < 2 && (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    fields.push_back(line.substr(start, tab - start));
  fields.push_back(line.substr(start));
  return fields;
}

}  // namespace

StepLog::StepLog(std::filesystem::path path) : path_(std::move(path)), own_pid_ns_(pid_namespace_inode()) {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

void StepLog::poll(ProgressState& state) {
  std::ifstream in(path_);
  if (!in) return;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string line;
  const auto now_steady = std::chrono::steady_clock::now();
  const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a partial line: read it next time
    offset_ += line.size() + 1;
    auto fields = split_fields(line);
    if (fields.size() < 2 || fields.back().empty()) continue;
    const long long started_ms = std::atoll(fields.front().c_str());
    const auto& output = fields.back();
    state.running[output] = now_steady - std::chrono::milliseconds(std::max(0LL, now_ms - started_ms));
    if (state.phase == BuildPhase::starting || state.phase == BuildPhase::configure) state.phase = BuildPhase::compile;
    if (fields.size() < 3) continue;  // no pid: running until its ninja line says otherwise
    Compile compile;
    const auto& pid = fields[1];
    compile.pid = std::atoi(pid.c_str());
    if (auto colon = pid.find(':'); colon != std::string::npos)
      compile.pid_ns = std::strtoull(pid.c_str() + colon + 1, nullptr, 10);
    if (compile.pid_ns == 0 || compile.pid_ns == own_pid_ns_) {
      compile.here = compile.pid;
    } else {
      // The step's namespace is the first other one a compile names: a line naming a
      // third is no compile of this step (only the build writes here), and is dropped.
      if (!step_pid_ns_) step_pid_ns_ = compile.pid_ns;
      if (compile.pid_ns != *step_pid_ns_) compile.here = -1;
    }
    compiles_[output] = compile;
  }
  find_pids_here();
  // A compile whose process has ended is no longer running (setuptools
  // prints a compile's command before it runs and nothing after).
  for (auto it = compiles_.begin(); it != compiles_.end();) {
    const auto& compile = it->second;
    const bool ended = compile.pid <= 0 || !compile.here || *compile.here <= 0 ||
                       (::kill(*compile.here, 0) != 0 && errno == ESRCH);
    if (ended) {
      state.running.erase(it->first);
      it = compiles_.erase(it);
    } else {
      ++it;
    }
  }
}

// The step supervisor runs the build in a PID namespace of its own: the pid a
// compile wrote is found here by its NSpid, once, while it runs. One not
// found has already ended.
void StepLog::find_pids_here() {
  std::set<int> wanted;
  for (const auto& [output, compile] : compiles_)
    if (!compile.here) wanted.insert(compile.pid);
  if (wanted.empty() || !step_pid_ns_) return;
  const auto found = outer_pids(*step_pid_ns_, wanted);  // one pass over /proc
  for (auto& [output, compile] : compiles_) {
    if (compile.here) continue;
    auto it = found.find(compile.pid);
    compile.here = it == found.end() ? -1 : it->second;  // -1: ended before it was looked for
  }
}

}  // namespace archbuild
