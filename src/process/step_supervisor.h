#pragma once

namespace archbuild {

// `archbuild _contain -- PROGRAM ARGS...`: what the build step runs under,
// so that nothing it starts outlives it. A setup.py may double-fork a
// daemon with setsid: it leaves the process group archbuild stops, but not
// this supervisor.
// - Where a PID namespace can be made (as root, or inside the user
//   namespace of an offline build), PROGRAM runs under an init process of a
//   namespace of its own; when PROGRAM exits the init stops everything left,
//   and should the supervisor itself be killed, the kernel ends the whole
//   namespace with its init.
// - Otherwise (a user without user namespaces) the supervisor is a child
//   subreaper (prctl PR_SET_CHILD_SUBREAPER): every orphan of the step is
//   re-parented to it, and it stops them when PROGRAM exits. Only killing the
//   supervisor itself (SIGKILL after the grace period) lets one escape.
// Leftovers are named on stderr (so in the build log) and killed with
// SIGKILL. The supervisor exits as PROGRAM did: the same code, or the same
// signal. Never returns when it re-raises a signal.
int run_step_supervisor(int argc, char** argv);

constexpr const char* kStepSupervisorCommand = "_contain";

}  // namespace archbuild
