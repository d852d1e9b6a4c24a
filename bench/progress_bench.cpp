// Progress parsing throughput: what archbuild does with every line of a build
// (progress state, first-error search, OOM check), on a synthetic PyTorch-like
// log. Target: over 1 million lines/s. Prints one line per measurement.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "builder/build_log.h"
#include "builder/progress.h"

int main(int argc, char** argv) {
  using namespace archbuild;
  size_t count = argc > 1 ? std::stoul(argv[1]) : 2'000'000;
  std::vector<std::string> lines;
  lines.reserve(count);
  for (size_t i = 0; lines.size() < count; ++i) {
    lines.push_back("[" + std::to_string(i % 9000 + 1) +
                    "/9000] Building CUDA object caffe2/CMakeFiles/torch_cuda.dir/"
                    "__/aten/src/ATen/native/cuda/Kernel" +
                    std::to_string(i) + ".cu.o");
    lines.push_back(
        "/pytorch/aten/src/ATen/native/cuda/Kernel.cu(42): warning #177-D: variable \"x\" was declared but never "
        "referenced");
    lines.push_back("-- Looking for pthread.h - found");
    lines.push_back("      |           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~");
  }
  lines.resize(count);
  ProgressState state;
  FirstErrorFinder finder;
  size_t oom = 0;
  auto start = std::chrono::steady_clock::now();
  state.start = start;
  for (const auto& line : lines) {
    feed_progress(line, state, start);
    finder.feed(line);
    oom += is_oom_line(line);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("progress parsing: %zu lines in %.3f s = %.2f million lines/s (target > 1) [%zu/%zu, oom %zu]\n", count,
              seconds, count / seconds / 1e6, state.finished, state.total, oom);
  return 0;
}
