#pragma once

namespace archbuild {

// archbuild's one SIGINT/SIGTERM handler, installed once at start by main().
// Outside a build's run, a signal ends archbuild with exit code 130. Work in
// flight is left as a crash would leave it: mirrors stay usable (libgit2
// writes atomically) and the build dir resumable. While any build runs (an
// InterruptibleScope is alive, in any thread), the handler only records the
// signal; every running build sees it on its next tick, stops its own process
// group and returns, and the caller exits 130 once it has said so.
void install_interrupt_exit();

// The signal recorded while a build ran (SIGINT or SIGTERM), or 0. It stays
// set: a scheduler checks it before starting more work.
int pending_interrupt();

// A child in a process group of its own (pgid = pid) that the handler stops
// (SIGTERM to the group) before archbuild exits on a signal.
void register_child_group(int pid);
void unregister_child_group(int pid);

// Forgets a recorded signal: for tests that raise one on purpose.
void clear_pending_interrupt();

// Marks a region where the caller handles interrupts itself by polling
// pending_interrupt(). Counted, so concurrent builds in threads nest freely.
class InterruptibleScope {
 public:
  InterruptibleScope();
  ~InterruptibleScope();
  InterruptibleScope(const InterruptibleScope&) = delete;
  InterruptibleScope& operator=(const InterruptibleScope&) = delete;
};

}  // namespace archbuild
