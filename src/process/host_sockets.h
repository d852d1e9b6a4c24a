#pragma once

#include <string>
#include <vector>

namespace archbuild {

// Filesystem (pathname) unix sockets on this host that an offline build
// step could reach: a network namespace closes TCP and abstract sockets,
// but a socket file connects across namespaces (a relay to the host's
// 127.0.0.1, docker.sock, an ssh agent). Gathered from /proc/net/unix (every
// socket bound in archbuild's network namespace, wherever it lives) and a
// bounded walk of /tmp, /run, /var/run and /dev/shm (sockets bound in other
// namespaces). The build step's mount namespace covers each with /dev/null
// (process/network_isolation.h). Only paths that are socket files now,
// reached through no symbolic link (a forged /proc/net/unix line or a
// swapped directory never gets /dev/null bound over another file); each
// directory walked with a budget of its own. Sorted, unique, at most
// `limit` (a warning says when more were found).
std::vector<std::string> host_socket_paths(size_t limit = 4096);

// The same from given texts and directories: the unit-testable part.
std::vector<std::string> socket_paths_in_proc_net_unix(const std::string& proc_net_unix_text);

}  // namespace archbuild
