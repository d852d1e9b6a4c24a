#pragma once

namespace archbuild {

// The offline build step's guard against relays to the host: a seccomp
// filter that refuses socket(AF_UNIX, ...) with EACCES, for the calling
// process and everything it starts (socketpair() still works: pipes between
// a build's own processes). With no unix socket of its own, the step can
// reach no socket file of the host, wherever it lies, whatever it is named,
// however it was moved or linked; the /dev/null covers over host sockets
// stay as a second layer. Sets PR_SET_NO_NEW_PRIVS (the filter needs it
// without CAP_SYS_ADMIN; a build runs no setuid program).
//
// On x86-64 the i386 entry points (socketcall, socket) are refused too, so
// a 32-bit call cannot step around the filter. Syscalls of other ABIs pass:
// qemu-user makes the host's syscalls for an emulated aarch64 program, and
// the filter must not stop the emulator itself.
//
// Returns 0, or the errno of a kernel without seccomp filters (the caller
// goes on with the covers alone).
int refuse_unix_sockets();

}  // namespace archbuild
