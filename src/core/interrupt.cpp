#include "core/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace archbuild {

namespace {

// Touched from the signal handler: lock-free atomics only.
std::atomic<int> active_scopes{0};
std::atomic<int> pending_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
// Process groups of captured children (nvcc probes, pip, python): stopped
// with archbuild when it exits on a signal, so none outlives it.
constexpr int kChildGroupSlots = 64;
std::atomic<int> child_groups[kChildGroupSlots];

void on_interrupt(int signo) {
  if (active_scopes.load() > 0) {
    int none = 0;
    pending_signal.compare_exchange_strong(none, signo);  // the first signal is the one reported
    return;
  }
  for (auto& group : child_groups)
    if (int pid = group.load(); pid > 0) ::kill(-pid, SIGTERM);
  static const char message[] = "\narchbuild: interrupted\n";
  ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  ::_exit(130);
}

}  // namespace

void install_interrupt_exit() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  // During a build the handler returns: other threads' system calls resume instead of failing with EINTR.
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

int pending_interrupt() { return pending_signal.load(); }

void register_child_group(int pid) {
  for (auto& group : child_groups) {
    int empty = 0;
    if (group.compare_exchange_strong(empty, pid)) return;
  }
}

void unregister_child_group(int pid) {
  for (auto& group : child_groups) {
    int expected = pid;
    if (group.compare_exchange_strong(expected, 0)) return;
  }
}

void clear_pending_interrupt() { pending_signal.store(0); }

InterruptibleScope::InterruptibleScope() { active_scopes.fetch_add(1); }

InterruptibleScope::~InterruptibleScope() { active_scopes.fetch_sub(1); }

}  // namespace archbuild
