#include "process/step_supervisor.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <linux/capability.h>

namespace archbuild {

namespace {

volatile sig_atomic_t stop_requested = 0;

// SIGINT/SIGTERM/SIGHUP reach the whole process group, PROGRAM included:
// the supervisor outlives them so that it can still clean up after PROGRAM.
void note_stop(int) { stop_requested = 1; }

void outlive_stop_signals() {
  struct sigaction action {};
  action.sa_handler = note_stop;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal_number, &action, nullptr);
}

// A root build step keeps only what building as root takes: owning and
// reading and writing its files whatever their modes (CHOWN, DAC_OVERRIDE,
// DAC_READ_SEARCH, FOWNER, FSETID), signalling its own processes (KILL),
// and the uid/gid changes some tools make (SETUID, SETGID). Everything else
// goes: CAP_SYS_ADMIN and CAP_SYS_PTRACE above all (umount of the offline
// step's covers, setns, another process's /proc/PID/root), and raw sockets,
// network and module administration, device nodes, ... Dropped from the
// bounding set and from the effective, permitted and inheritable sets, for
// the step and all it starts; a process without them (a user) has nothing
// to drop.
void drop_capabilities_a_build_does_not_need() {
  constexpr int kKept[] = {CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER,
                           CAP_FSETID, CAP_KILL,         CAP_SETGID,          CAP_SETUID};
  auto kept = [&](int capability) {
    for (int keep : kKept)
      if (keep == capability) return true;
    return false;
  };
  // The kernel's last capability: a newer one than these headers know is dropped too.
  int last = CAP_LAST_CAP;
  if (std::ifstream in("/proc/sys/kernel/cap_last_cap"); in) in >> last;
  for (int capability = 0; capability <= last; ++capability)
    if (!kept(capability)) ::prctl(PR_CAPBSET_DROP, capability, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return;
  for (int capability = 0; capability < 64; ++capability) {
    if (kept(capability)) continue;
    const unsigned bit = 1u << (capability % 32);
    auto& word = data[capability / 32];
    word.effective &= ~bit;
    word.permitted &= ~bit;
    word.inheritable &= ~bit;
  }
  ::syscall(SYS_capset, &header, data);
}

// In the namespace's init: a /proc of this PID namespace, in a mount
// namespace of its own, so that the step's pids and /proc agree ($$ and
// /proc/$$ are the same process) and the host's processes are not listed.
// Best effort: where mounting is not allowed /proc stays the host's.
void mount_own_proc() {
  if (::unshare(CLONE_NEWNS) != 0) return;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return;  // never onto the host's mounts
  ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
}

// This process's pid as /proc numbers it: inside a PID namespace getpid()
// says 1 while /proc (the host's) knows another number.
std::string proc_pid() {
  char buffer[32] = {};
  ssize_t n = ::readlink("/proc/self", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::to_string(::getpid());
}

// Children of this (single-threaded) process, in /proc's numbering.
std::vector<std::string> children_in_proc() {
  const std::string self = proc_pid();
  std::ifstream in("/proc/" + self + "/task/" + self + "/children");
  std::vector<std::string> pids;
  for (std::string pid; in >> pid;) pids.push_back(pid);
  return pids;
}

std::string command_name(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/comm");
  std::string name;
  std::getline(in, name);
  return name.empty() ? "?" : name;
}

// After PROGRAM exited: SIGKILL whatever is left until nothing is (a killed
// parent's children are re-parented here, so the loop ends once every
// descendant is reaped). `in_pid_namespace`: kill(-1) reaches exactly the
// namespace; otherwise each child is killed by its pid.
void stop_leftovers(bool in_pid_namespace) {
  std::vector<std::string> named;
  for (int round = 0;; ++round) {
    auto left = children_in_proc();
    for (const auto& pid : left)
      if (named.size() < 8 && round == 0) named.push_back(pid + " " + command_name(pid));
    if (in_pid_namespace) {
      ::kill(-1, SIGKILL);
    } else {
      for (const auto& pid : left) ::kill(static_cast<pid_t>(std::stol(pid)), SIGKILL);
    }
    int status = 0;
    pid_t reaped = ::waitpid(-1, &status, left.empty() ? WNOHANG : 0);
    if (reaped < 0 && errno == ECHILD) break;
    if (reaped == 0 && left.empty()) break;  // nothing left that /proc shows, nothing to reap
    if (round == 0 && !left.empty()) {
      std::ostringstream line;
      line << "archbuild: the build step left " << left.size() << " process" << (left.size() == 1 ? "" : "es")
           << " running (";
      for (size_t i = 0; i < named.size(); ++i) line << (i ? ", " : "") << "pid " << named[i];
      line << (left.size() > named.size() ? ", ..." : "") << "); stopped with SIGKILL\n";
      std::cerr << line.str() << std::flush;
    }
  }
}

// Forks PROGRAM, reaps everything until PROGRAM exits, stops what is left.
// Returns PROGRAM's wait status.
int supervise(char** program, bool in_pid_namespace) {
  pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "archbuild: cannot start the build step: fork: " << std::strerror(errno) << "\n";
    return 126 << 8;
  }
  if (child == 0) {
    ::signal(SIGPIPE, SIG_DFL);  // the supervisor's own choice, not the step's
    drop_capabilities_a_build_does_not_need();
    ::execv(program[0], program);
    const int error = errno;
    std::cerr << "archbuild: cannot run " << program[0] << ": " << std::strerror(error) << "\n";
    ::_exit(error == ENOENT ? 127 : 126);
  }
  int program_status = 0;
  while (true) {
    int status = 0;
    pid_t reaped = ::waitpid(-1, &status, 0);
    if (reaped == child) {
      program_status = status;
      break;
    }
    if (reaped < 0 && errno != EINTR) break;  // ECHILD: cannot happen while PROGRAM runs
  }
  stop_leftovers(in_pid_namespace);
  return program_status;
}

[[noreturn]] void exit_like(int status) {
  if (WIFSIGNALED(status)) {
    int signal_number = WTERMSIG(status);
    rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // the step's core dump, if any, is the one to keep
    ::signal(signal_number, SIG_DFL);
    sigset_t all;
    sigfillset(&all);
    ::sigprocmask(SIG_UNBLOCK, &all, nullptr);
    ::raise(signal_number);
    ::_exit(128 + signal_number);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace

int run_step_supervisor(int argc, char** argv) {
  if (argc < 4 || std::string(argv[2]) != "--") {
    std::cerr << "usage: archbuild " << kStepSupervisorCommand << " -- PROGRAM [ARGS...]\n";
    return 2;
  }
  char** program = argv + 3;
  // Dies with archbuild, even a SIGKILLed one: its stop signals it holds off
  // to clean up, but when archbuild is gone no one would wait for the step.
  // (The namespace's init dies with this process in turn, and the kernel
  // then stops everything in the namespace.)
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return 1;  // archbuild died before the line above
  outlive_stop_signals();
  ::signal(SIGPIPE, SIG_IGN);  // a closed stderr must not kill it before it cleans up
  int status_pipe[2];
  if (::unshare(CLONE_NEWPID) == 0 && ::pipe2(status_pipe, O_CLOEXEC) == 0) {
    pid_t init = ::fork();
    if (init == 0) {
      // The namespace's init: it dies with the supervisor, and the kernel
      // then kills everything else in the namespace.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::close(status_pipe[0]);
      mount_own_proc();
      int status = supervise(program, true);
      [[maybe_unused]] auto written = ::write(status_pipe[1], &status, sizeof status);
      ::_exit(0);
    }
    ::close(status_pipe[1]);
    if (init > 0) {
      int init_status = 0;
      while (::waitpid(init, &init_status, 0) < 0 && errno == EINTR) {
      }
      int status = 0;
      if (::read(status_pipe[0], &status, sizeof status) != sizeof status) status = SIGKILL;  // init was killed
      exit_like(status);
    }
    ::close(status_pipe[0]);
  }
  // No PID namespace here: be the subreaper of the step instead. Said in
  // the log where that is refused too (qemu-user does not pass it on).
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    std::fprintf(stderr,
                 "archbuild: note: processes the build step leaves running cannot be stopped here "
                 "(no PID namespace, and PR_SET_CHILD_SUBREAPER failed: %s)\n",
                 std::strerror(errno));
  exit_like(supervise(program, false));
}

}  // namespace archbuild
