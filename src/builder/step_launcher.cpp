#include "builder/step_launcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace archbuild {

int run_step_launcher(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "archbuild _launch: no command\n");
    return 2;
  }
  const char* output = "";
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "-o") == 0) output = argv[i + 1];
  // CMake's try_compile projects (cmTC_*) are not build steps ninja reports.
  const char* log = std::getenv("ARCHBUILD_STEP_LOG");
  if (log && *log && *output && !std::strstr(output, "cmTC_")) {
    long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    char line[4096];
    int length = std::snprintf(line, sizeof line, "%lld\t%s\n", now, output);
    int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      // One write under PIPE_BUF bytes with O_APPEND: lines never interleave.
      if (length > 0 && ::write(fd, line, static_cast<size_t>(std::min<int>(length, sizeof line - 1))) < 0) {
      }
      ::close(fd);
    }
  }
  ::execvp(argv[2], argv + 2);
  std::fprintf(stderr, "archbuild _launch: cannot run %s: %s\n", argv[2], std::strerror(errno));
  return 127;
}

}  // namespace archbuild
