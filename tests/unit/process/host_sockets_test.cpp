#include "process/host_sockets.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace archbuild {
namespace {

// A unix socket listening at `path`, or -1.
int listening_socket(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  address.sun_family = AF_UNIX;
  path.copy(address.sun_path, sizeof address.sun_path - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 1) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(HostSockets, PathnameSocketsOfProcNetUnixAbstractAndUnnamedLeftOut) {
  const std::string text =
      "Num       RefCount Protocol Flags    Type St Inode Path\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 20791 /run/dbus/system_bus_socket\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 20800 @/tmp/.X11-unix/X0\n"
      "0000000000000000: 00000003 00000000 00000000 0001 03 20801\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 20802 /home/u/a relay.sock\n";
  EXPECT_EQ(socket_paths_in_proc_net_unix(text),
            (std::vector<std::string>{"/run/dbus/system_bus_socket", "/home/u/a relay.sock"}));
  EXPECT_TRUE(socket_paths_in_proc_net_unix("").empty());
}

TEST(HostSockets, AListeningSocketUnderTmpIsFound) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-sockets-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "relay.sock").string();
  int fd = listening_socket(path);
  ASSERT_GE(fd, 0);
  auto found = host_socket_paths();
  ::close(fd);
  std::filesystem::remove_all(dir);
  EXPECT_NE(std::find(found.begin(), found.end(), path), found.end());
  EXPECT_TRUE(std::is_sorted(found.begin(), found.end()));
}

TEST(HostSockets, AForgedProcNetUnixLineNeverNamesAnotherFile) {
  // A socket's name may hold a newline: /proc/net/unix then shows a line the
  // socket's owner wrote, naming any file. Only socket files are covered.
  auto dir = std::filesystem::path("/tmp") / ("archbuild-forge-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto victim = (dir / "f").string();
  { std::ofstream(victim) << "not a socket"; }
  const std::string name = (dir / "x").string() + "\n0: 1 2 3 4 5 6 " + victim;
  std::filesystem::create_directories(std::filesystem::path(name).parent_path());  // the forged line's dirs exist
  int fd = listening_socket(name);
  ASSERT_GE(fd, 0);
  auto found = host_socket_paths();
  ::close(fd);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(std::find(found.begin(), found.end(), victim), found.end());
}

}  // namespace
}  // namespace archbuild
