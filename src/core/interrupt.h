#pragma once

namespace archbuild {

// SIGINT/SIGTERM outside a build's run end archbuild with exit code 130 (a
// build's run installs its own handling, which stops the build's process
// group first, then restores this). Work in flight is left as a crash would
// leave it: mirrors stay usable (libgit2 writes atomically) and the build dir
// resumable.
void install_interrupt_exit();

}  // namespace archbuild
