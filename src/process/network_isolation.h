#pragma once

#include <string>
#include <vector>

namespace archbuild {

// How the build step is kept off the network: a network namespace of its
// own, which holds nothing but a loopback device.
// - As root (CAP_SYS_ADMIN): unshare(CLONE_NEWNET).
// - As another user: unshare(CLONE_NEWUSER | CLONE_NEWNET), the user mapped
//   to itself (files the build writes keep their owner), where the kernel
//   allows unprivileged user namespaces.
// - Filesystem unix sockets reach across network namespaces: in a mount
//   namespace of its own the step finds /dev/null bound over each socket the
//   host had when it started (process/host_sockets.h), where mounts are
//   allowed (as root, or inside the user namespace).
// - Neither (a container's seccomp profile, a kernel setting): unavailable;
//   the build then runs with proxy variables pointing at a closed port and
//   pip told not to use an index, which stops the usual downloads but
//   proves nothing.
enum class NetworkIsolation { network_namespace, user_network_namespace, unavailable };

struct NetworkIsolationProbe {
  NetworkIsolation mode = NetworkIsolation::unavailable;
  std::string reason;           // why unavailable: "unshare(CLONE_NEWNET): Operation not permitted; ..."
  bool sockets_closed = false;  // a private mount namespace works too: host socket files are covered
  // The step's own unix sockets are refused (unix_socket_filter.h): no host
  // socket file is reachable at all, covered or not.
  bool unix_sockets_refused = false;
  // "network namespace", "user + network namespace", "unavailable (...)"
  std::string describe() const;
};

// Tries, in a forked child, exactly what the build step will do. Cached:
// the answer does not change while archbuild runs.
const NetworkIsolationProbe& probe_network_isolation();

// What the child runs between fork and exec. Only system calls (no
// allocation: the strings are made before the fork). Returns 0 or an errno.
struct NetworkIsolationSetup {
  NetworkIsolation mode = NetworkIsolation::unavailable;
  std::string uid_map, gid_map;  // "UID UID 1\n", made in the parent
  // Socket files to cover with /dev/null in a private mount namespace;
  // best effort (a failure leaves them reachable, it does not stop the build)
  // unless `require_mount_namespace`, which the probe sets.
  std::vector<std::string> hidden_sockets;
  bool require_mount_namespace = false;
  static NetworkIsolationSetup for_mode(NetworkIsolation mode);
  // In the child before exec: the namespaces, the covers, then a seccomp
  // filter refusing unix sockets (process/unix_socket_filter.h). 0 or errno.
  int enter() const;

 private:
  int enter_namespaces() const;
};

}  // namespace archbuild
