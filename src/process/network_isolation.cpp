#include "process/network_isolation.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <net/if.h>

#include "core/log.h"
#include "process/unix_socket_filter.h"

namespace archbuild {

namespace {

int write_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t written = ::write(fd, text.data(), text.size());
  int error = written == static_cast<ssize_t>(text.size()) ? 0 : (written < 0 ? errno : EIO);
  ::close(fd);
  return error;
}

// The namespace's loopback starts down: up, so that a build's local
// servers (sccache's, say) still work; failing that is not fatal.
void loopback_up() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  if (::ioctl(fd, SIOCGIFFLAGS, &request) == 0) {
    request.ifr_flags |= IFF_UP;
    ::ioctl(fd, SIOCSIFFLAGS, &request);
  }
  ::close(fd);
}

// Runs `setup.enter()` in a child; 0 or its errno.
int try_in_child(const NetworkIsolationSetup& setup) {
  pid_t pid = ::fork();
  if (pid < 0) return errno;
  if (pid == 0) ::_exit(setup.enter() & 0xff);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
}

// Whether, after `setup.enter()` in a child, the child's own unix socket is
// refused (the filter holds: a kernel with seccomp, no emulator between).
bool unix_sockets_refused_in_child(const NetworkIsolationSetup& setup) {
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (setup.enter() != 0) ::_exit(2);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ::_exit(fd < 0 && errno == EACCES ? 0 : 1);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::string NetworkIsolationProbe::describe() const {
  switch (mode) {
    case NetworkIsolation::network_namespace:
      return sockets_closed ? "network and mount namespace" : "network namespace";
    case NetworkIsolation::user_network_namespace:
      return sockets_closed ? "user + network + mount namespace" : "user + network namespace";
    case NetworkIsolation::unavailable: return "unavailable (" + reason + ")";
  }
  return "";
}

NetworkIsolationSetup NetworkIsolationSetup::for_mode(NetworkIsolation mode) {
  NetworkIsolationSetup setup;
  setup.mode = mode;
  setup.uid_map = std::to_string(::getuid()) + " " + std::to_string(::getuid()) + " 1\n";
  setup.gid_map = std::to_string(::getgid()) + " " + std::to_string(::getgid()) + " 1\n";
  return setup;
}

int NetworkIsolationSetup::enter() const {
  if (int error = enter_namespaces()) return error;
  // No unix socket of its own: no socket file of the host is reachable,
  // wherever it lies (unix_socket_filter.h). Where the kernel has no
  // seccomp filters, the covers above are what holds.
  if (mode != NetworkIsolation::unavailable) refuse_unix_sockets();
  return 0;
}

int NetworkIsolationSetup::enter_namespaces() const {
  switch (mode) {
    case NetworkIsolation::unavailable: return 0;
    case NetworkIsolation::network_namespace:
      if (::unshare(CLONE_NEWNET) != 0) return errno;
      break;
    case NetworkIsolation::user_network_namespace:
      if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return errno;
      // setgroups must be denied before an unprivileged process may map its gid
      if (int error = write_file("/proc/self/setgroups", "deny")) return error;
      if (int error = write_file("/proc/self/uid_map", uid_map)) return error;
      if (int error = write_file("/proc/self/gid_map", gid_map)) return error;
      break;
  }
  loopback_up();
  if (hidden_sockets.empty() && !require_mount_namespace) return 0;
  // Private propagation first: a bind made in a namespace that still shares
  // mounts with the host would appear on the host.
  if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return require_mount_namespace ? errno : 0;
  for (const auto& socket_path : hidden_sockets) {
    // Checked again right before: still a socket, not a link (gone since: nothing to cover).
    struct stat info {};
    if (::lstat(socket_path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode))
      ::mount("/dev/null", socket_path.c_str(), nullptr, MS_BIND, nullptr);
  }
  return 0;
}

const NetworkIsolationProbe& probe_network_isolation() {
  static const NetworkIsolationProbe probe = [] {
    NetworkIsolationProbe result;
    std::string reasons;
    for (auto mode : {NetworkIsolation::network_namespace, NetworkIsolation::user_network_namespace}) {
      int error = try_in_child(NetworkIsolationSetup::for_mode(mode));
      if (error == 0) {
        result.mode = mode;
        auto with_mounts = NetworkIsolationSetup::for_mode(mode);
        with_mounts.require_mount_namespace = true;
        result.sockets_closed = try_in_child(with_mounts) == 0;
        result.unix_sockets_refused = unix_sockets_refused_in_child(NetworkIsolationSetup::for_mode(mode));
        log::verbose("network isolation: {}{}", result.describe(),
                     reasons.empty() ? (::getuid() == 0 ? " (as root)" : "") : " (" + reasons + ")");
        return result;
      }
      reasons += std::string(reasons.empty() ? "" : "; ") +
                 (mode == NetworkIsolation::network_namespace ? "unshare(CLONE_NEWNET): "
                                                              : "unshare(CLONE_NEWUSER|CLONE_NEWNET): ") +
                 std::strerror(error);
    }
    result.reason = reasons;
    log::verbose(
        "network isolation: unavailable ({}): build steps get proxy variables pointing at a closed port instead",
        reasons);
    return result;
  }();
  return probe;
}

}  // namespace archbuild
