#include "builder/step_launcher.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "builder/arch_enforcement.h"
#include "process/pid_namespace.h"

namespace archbuild {

int run_step_launcher(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "archbuild _launch: no command\n");
    return 2;
  }
  // `_launch --nvcc-targets=LIST COMMAND...`: the asked targets ride on the
  // launcher's own command line (CMake's launcher variable), so a changed
  // list changes every compile command and ninja rebuilds what it must.
  constexpr std::string_view targets_flag = "--nvcc-targets=";
  if (std::string_view(argv[2]).starts_with(targets_flag)) {
    ::setenv(kNvccTargetsVariable, argv[2] + targets_flag.size(), 1);
    ++argv;
    if (--argc < 3) {
      std::fprintf(stderr, "archbuild _launch: no command\n");
      return 2;
    }
  }
  if (std::getenv(kStepLaunchedVariable)) {
    ::execvp(argv[2], argv + 2);
    std::fprintf(stderr, "archbuild _launch: cannot run %s: %s\n", argv[2], std::strerror(errno));
    return 127;
  }
  ::setenv(kStepLaunchedVariable, "1", 1);
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
    // The pid stays the compile's own (exec below): the status line counts
    // the ones alive as running, which setuptools' output never says. With
    // its PID namespace: the step supervisor's, where archbuild's pids differ.
    const auto pid_ns = pid_namespace_inode();
    int length = std::snprintf(line, sizeof line, "%lld\t%d:%llu\t%s\n", now, static_cast<int>(::getpid()),
                               static_cast<unsigned long long>(pid_ns.value_or(0)), output);
    int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      // One write under PIPE_BUF bytes with O_APPEND: lines never interleave.
      if (length > 0 && ::write(fd, line, static_cast<size_t>(std::min<int>(length, sizeof line - 1))) < 0) {
      }
      ::close(fd);
    }
  }
  std::vector<std::string> command(argv + 2, argv + argc);
  // CMake's compiler is the launcher toolkit's nvcc (for its device link);
  // a compile launched here runs the real one, so that ccache hashes the real
  // compiler, as on another builder.
  const char* shim = std::getenv("CUDACXX");
  const char* real = std::getenv(kRealNvccVariable);
  for (auto& word : command)
    if (shim && real && *real && word == shim) word = real;
  // An nvcc call (behind ccache, say) builds exactly the asked targets.
  if (std::getenv(kNvccTargetsVariable) && !std::strstr(output, "cmTC_"))
    for (size_t i = 0; i < command.size(); ++i)
      if (std::filesystem::path(command[i]).filename() == "nvcc") {
        command = enforce_nvcc_command(command, i);
        break;
      }
  std::vector<char*> words;
  for (auto& word : command) words.push_back(word.data());
  words.push_back(nullptr);
  ::execvp(words[0], words.data());
  std::fprintf(stderr, "archbuild _launch: cannot run %s: %s\n", words[0], std::strerror(errno));
  return 127;
}

}  // namespace archbuild
