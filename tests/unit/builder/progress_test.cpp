#include "builder/progress.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

using namespace archbuild;
using Clock = std::chrono::steady_clock;

TEST(Progress, NinjaCmakeAndPhases) {
  ProgressState state;
  auto t0 = Clock::now();
  state.start = t0;
  EXPECT_TRUE(feed_progress("-- The CXX compiler identification is GNU 12.2.0", state, t0));
  EXPECT_EQ(state.phase, BuildPhase::configure);
  EXPECT_FALSE(feed_progress("some unrelated line", state, t0));
  {
    ProgressState indented;  // pip -v indents what the build prints
    EXPECT_TRUE(feed_progress("  [1/2] c++ -c a.cpp -o a.o", indented, t0));
    EXPECT_EQ(indented.total, 2u);
  }
  EXPECT_TRUE(feed_progress("[1/40] Building CUDA object aten/a.cu.o", state, t0 + std::chrono::seconds(1)));
  EXPECT_EQ(state.phase, BuildPhase::compile);
  EXPECT_EQ(state.finished, 1u);
  EXPECT_EQ(state.total, 40u);
  EXPECT_EQ(state.last_target, "Building CUDA object aten/a.cu.o");
  feed_progress("[20/40] Building CXX object b.cpp.o", state, t0 + std::chrono::seconds(11));
  auto text = describe_progress(state, t0 + std::chrono::seconds(11));
  EXPECT_EQ(text.phase, "compile");
  EXPECT_EQ(text.counts, "20/40");
  EXPECT_EQ(text.percent, "50%");
  EXPECT_EQ(text.elapsed, "0:11");
  EXPECT_EQ(text.rate, "2.0/s");  // 20 steps in the 10 s since the first
  EXPECT_EQ(text.eta, "0:10");
  feed_progress("[40/40] Linking CXX shared library libtorch_cuda.so", state, t0 + std::chrono::seconds(20));
  EXPECT_EQ(state.phase, BuildPhase::link);
  feed_progress("creating 'dist/torch-2.9.1-cp311-cp311-linux_x86_64.whl' and adding", state, t0);
  EXPECT_EQ(state.phase, BuildPhase::wheel);
  ProgressState early;  // setuptools names bdist_wheel before it compiles anything
  feed_progress("running bdist_wheel", early, t0);
  feed_progress("  Building wheel for torch-scatter (setup.py): started", early, t0);
  EXPECT_NE(early.phase, BuildPhase::wheel);
  ProgressState make_style;
  EXPECT_TRUE(feed_progress("[ 42%] Building CXX object foo.o", make_style, t0));
  EXPECT_EQ(describe_progress(make_style, t0).percent, "42%");
  EXPECT_FALSE(feed_progress("[x/y] not ninja", make_style, t0));
  EXPECT_FALSE(feed_progress("[12/] broken", make_style, t0));
}

TEST(Progress, FormatterFitsTheWidthAndShowsTheLongestRunning) {
  ProgressState state;
  auto t0 = Clock::now();
  state.start = t0;
  state.first_step = t0;
  state.finished = 412;
  state.total = 5123;
  state.phase = BuildPhase::compile;
  state.running["aten/src/ATen/native/cuda/very/long/path/SortingKernel.cu.o"] = t0 + std::chrono::seconds(100);
  state.running["short.cu.o"] = t0 + std::chrono::seconds(300);
  auto text = describe_progress(state, t0 + std::chrono::seconds(400));
  EXPECT_EQ(text.current.rfind("aten/src", 0), 0u) << text.current;  // the oldest one
  EXPECT_NE(text.current.find("(5:00)"), std::string::npos) << text.current;
  auto line = format_status_line(text, 80);
  EXPECT_LE(line.size(), 80u);
  EXPECT_EQ(line.rfind("[compile 412/5123 8%] 6:40 1.0/s ETA 1:16:14 2 running", 0), 0u) << line;
  EXPECT_NE(line.find("..."), std::string::npos);
  EXPECT_LE(format_status_line(text, 20).size(), 20u);
  EXPECT_EQ(format_duration(3725), "1:02:05");
}

// setuptools without ninja (pytorch_scatter's use_ninja=False) prints each
// compiler run itself: counted, with the source as the current target.
TEST(Progress, CompilerLinesWithoutNinja) {
  ProgressState state;
  auto t0 = Clock::now();
  state.start = t0;
  EXPECT_TRUE(
      feed_progress("/c/ccache-bin/gcc -Wsign-compare -DNDEBUG -g -O3 -fPIC -DWITH_CUDA -Icsrc -c csrc/scatter.cpp "
                    "-o build/temp.linux-x86_64-cpython-311/csrc/scatter.o -O3 -fopenmp",
                    state, t0));
  EXPECT_EQ(state.phase, BuildPhase::compile);
  EXPECT_EQ(state.last_target, "csrc/scatter.cpp");
  EXPECT_TRUE(
      feed_progress("/c/launcher-cuda/ccache-1/bin/nvcc -I/t/include -c csrc/cuda/scatter_cuda.cu -o "
                    "build/temp/csrc/cuda/scatter_cuda.o -D__CUDA_NO_HALF_OPERATORS__ --expt-relaxed-constexpr",
                    state, t0 + std::chrono::seconds(30)));
  auto text = describe_progress(state, t0 + std::chrono::seconds(40));
  EXPECT_EQ(text.counts, "#2");
  EXPECT_EQ(text.current, "csrc/cuda/scatter_cuda.cu");
  EXPECT_EQ(format_status_line(text, 80), "[compile #2] 0:40  csrc/cuda/scatter_cuda.cu");
  EXPECT_TRUE(
      feed_progress("/usr/bin/g++ -shared -Wl,-O1 build/temp/csrc/scatter.o -L/t/lib64 -lc10 -o "
                    "build/lib.linux-x86_64-cpython-311/torch_scatter/_scatter_cuda.so -s",
                    state, t0));
  EXPECT_EQ(state.phase, BuildPhase::link);
  EXPECT_EQ(state.last_target, "build/lib.linux-x86_64-cpython-311/torch_scatter/_scatter_cuda.so");
  EXPECT_FALSE(feed_progress("gcc version 12.2.0 (Debian 12.2.0-14)", state, t0));  // no -c, no -shared
  EXPECT_FALSE(feed_progress("echo gcc -c a.cpp", state, t0));                      // not a compiler run
  EXPECT_EQ(state.compiles_started, 2u);
}

// cpp_extension's ninja file prints the whole command when a step ends: the
// output after -o finishes that one compile, and no other whose name merely
// starts the same.
TEST(Progress, ANinjaCommandLineFinishesItsOutput) {
  ProgressState state;
  auto t0 = Clock::now();
  state.start = t0;
  state.running["/w/build/a.o"] = t0;
  state.running["/w/build/a.o.d"] = t0;
  state.running["/w/build/b.o"] = t0;
  feed_progress(
      "[2/11] /c/launcher-cuda/bin/nvcc -MD -MF /w/build/a.o.d -Icsrc -c -c /w/csrc/a.cu -o /w/build/a.o "
      "-D__CUDA_NO_HALF_OPERATORS__ -gencode=arch=compute_90,code=sm_90",
      state, t0);
  EXPECT_EQ(state.running.count("/w/build/a.o"), 0u);
  EXPECT_EQ(state.running.count("/w/build/a.o.d"), 1u);
  EXPECT_EQ(state.running.count("/w/build/b.o"), 1u);
  feed_progress("[3/11] c++ -MMD -MF /w/build/b.o.d -c /w/csrc/b.cpp -o /w/build/b.o", state, t0);
  EXPECT_EQ(state.running.count("/w/build/b.o"), 0u);
}

// Units that take minutes each: the rate per minute, never "0.0/s".
TEST(Progress, ASlowRateReadsPerMinute) {
  ProgressState state;
  auto t0 = Clock::now();
  state.start = t0;
  feed_progress("[1/73] c++ -c flash_api.cpp -o flash_api.o", state, t0);
  feed_progress("[4/73] nvcc -c flash_bwd.cu -o flash_bwd.o", state, t0 + std::chrono::seconds(360));
  EXPECT_EQ(describe_progress(state, t0 + std::chrono::seconds(360)).rate, "0.7/min");  // 4 steps in 6 min
  feed_progress("[40/73] nvcc -c flash_fwd.cu -o flash_fwd.o", state, t0 + std::chrono::seconds(380));
  EXPECT_EQ(describe_progress(state, t0 + std::chrono::seconds(380)).rate, "0.1/s");
  ProgressState slowest;  // one step in 25 minutes
  slowest.start = t0;
  feed_progress("[1/9] nvcc -c a.cu -o a.o", slowest, t0);
  feed_progress("[2/9] nvcc -c b.cu -o b.o", slowest, t0 + std::chrono::minutes(50));
  EXPECT_EQ(describe_progress(slowest, t0 + std::chrono::minutes(50)).rate, "25 min/step");
}

// A forecast gives the ETA from the first second (ninja's own needs a
// previous .ninja_log), then weighs in the rate as steps finish.
TEST(Progress, TheForecastGivesAnEtaBeforeAnyStep) {
  auto t0 = Clock::now();
  ProgressState state;
  state.start = t0;
  state.predicted_seconds = 600;
  feed_progress("-- Configuring done", state, t0);
  EXPECT_EQ(describe_progress(state, t0 + std::chrono::seconds(1)).eta, "9:59");
  feed_progress("[1/100] Building CUDA object a.cu.o", state, t0 + std::chrono::seconds(100));
  feed_progress("[50/100] Building CUDA object b.cu.o", state, t0 + std::chrono::seconds(200));
  // Half done: half the forecast's 400 s left and half the rate's 100 s (50 steps at 0.5/s).
  EXPECT_EQ(describe_progress(state, t0 + std::chrono::seconds(200)).eta, "4:10");
  ProgressState overrun = state;
  overrun.finished = 0;
  overrun.total = 0;
  EXPECT_EQ(describe_progress(overrun, t0 + std::chrono::seconds(700)).eta, "");  // past the forecast: no guess
  // A forecast already overrun weighs nothing: the rate's ETA alone.
  ProgressState late = state;
  late.predicted_seconds = 150;
  EXPECT_EQ(describe_progress(late, t0 + std::chrono::seconds(200)).eta, "1:40");
  state.predicted_seconds.reset();
  EXPECT_EQ(describe_progress(state, t0 + std::chrono::seconds(200)).eta, "1:40");  // the rate's alone
}
