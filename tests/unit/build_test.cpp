#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "build/build_log.h"
#include "build/build_plan.h"
#include "build/job_planner.h"
#include "build/launcher_shims.h"
#include "build/ninja_trace.h"
#include "build/progress.h"
#include "core/strings.h"
#include "process/run_process.h"

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
  EXPECT_EQ(line.rfind("[compile 412/5123 8%] 6:40 1.0/s ETA 1:16:14", 0), 0u) << line;
  EXPECT_NE(line.find("..."), std::string::npos);
  EXPECT_LE(format_status_line(text, 20).size(), 20u);
  EXPECT_EQ(format_duration(3725), "1:02:05");
}

TEST(Jobs, MemoryCoresOverrideAndThreads) {
  JobInputs in;
  in.cores = 16;
  in.available_memory_bytes = 32ull << 30;
  in.job_memory_gb = 4.5;
  EXPECT_EQ(plan_jobs(in).jobs, 7u);  // memory-bound: 32 / 4.5
  in.available_memory_bytes = 256ull << 30;
  EXPECT_EQ(plan_jobs(in).jobs, 16u);  // core-bound
  in.available_memory_bytes = 1ull << 30;
  EXPECT_EQ(plan_jobs(in).jobs, 1u);  // never 0
  in.jobs_override = 3;
  EXPECT_EQ(plan_jobs(in).jobs, 3u);
  in.jobs_override.reset();
  in.available_memory_bytes = 256ull << 30;
  in.compile_units = 2;  // extension-cpp: one .cu (+ a .cpp)
  in.arch_count = 6;
  auto plan = plan_jobs(in);
  EXPECT_EQ(plan.nvcc_threads, 6u);  // 16 jobs / 2 units = 8 spare, capped by 6 archs
  in.arch_count = 1;
  EXPECT_EQ(plan_jobs(in).nvcc_threads, 1u);
  in.arch_count = 6;
  in.compile_units = 500;  // PyTorch: plenty of files, no threads
  EXPECT_EQ(plan_jobs(in).nvcc_threads, 1u);
  in.compile_units = 3;  // pytorch_scatter: 3 .cu files, but compiled one at a time
  in.arch_count = 7;
  EXPECT_EQ(plan_jobs(in).nvcc_threads, 5u);  // 16 / 3 if they ran at once
  in.one_file_at_a_time = true;
  plan = plan_jobs(in);
  EXPECT_EQ(plan.nvcc_threads, 7u);
  EXPECT_NE(plan.reason.find("one file at a time"), std::string::npos) << plan.reason;
}

TEST(BuildLog, OomLines) {
  EXPECT_TRUE(is_oom_line("c++: fatal error: Killed signal terminated program cc1plus"));
  EXPECT_TRUE(is_oom_line("internal compiler error: Killed (program cc1plus)"));
  EXPECT_TRUE(is_oom_line("nvcc error   : 'cicc' died due to signal 9 (Kill signal)"));
  EXPECT_FALSE(is_oom_line("error: identifier \"x\" is undefined"));
}

TEST(BuildLog, FirstErrorWithContextAndCommand) {
  FirstErrorFinder finder;
  for (const char* line : {"[1/3] Building CXX object a.o", "[2/3] Building CUDA object b.cu.o", "FAILED: b.cu.o",
                           "nvcc -c b.cu -o b.cu.o", "b.cu(3): error: expected a \";\"", "  int x", "1 error detected",
                           "[3/3] c.o", "later.cpp: error: second error"})
    finder.feed(line);
  ASSERT_TRUE(finder.found());
  EXPECT_EQ(finder.failed_target(), "b.cu.o");
  EXPECT_EQ(finder.failing_command(), "nvcc -c b.cu -o b.cu.o");
  auto excerpt = finder.excerpt();
  ASSERT_GE(excerpt.size(), 4u);
  EXPECT_EQ(excerpt[3], "b.cu(3): error: expected a \";\"");
  EXPECT_EQ(excerpt[0], "[2/3] Building CUDA object b.cu.o");
  FirstErrorFinder newer_ninja;
  newer_ninja.feed("FAILED: [code=2] CMakeFiles/x.dir/a.cu.o ");
  EXPECT_EQ(newer_ninja.failed_target(), "CMakeFiles/x.dir/a.cu.o");
  FirstErrorFinder none;
  none.feed("Traceback (most recent call last):");
  none.feed("the end");
  EXPECT_FALSE(none.found());
  EXPECT_EQ(none.excerpt().back(), "the end");  // the tail instead
}

TEST(NinjaTrace, LogToChromeTrace) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-ninja-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string previous = "# ninja log v5\n0\t2500\t0\told.o\tdeadbeef\n";  // an earlier build
  std::ofstream(dir / ".ninja_log") << previous << "10\t1000\t0\tb.o\tbbbb\n"  // appended as steps finish
                                    << "1000\t1500\t0\tc.o\tcccc\n"
                                    << "0\t3000\t0\ta.o\taaaa\n";
  auto steps = read_ninja_log(dir / ".ninja_log", previous.size());
  ASSERT_EQ(steps.size(), 3u);  // this build only
  EXPECT_EQ(read_ninja_log(dir / ".ninja_log").size(), 3u);  // from 0: old.o ends after b.o, so a new build began
  auto trace = chrome_trace(steps);
  ASSERT_EQ(trace["traceEvents"].size(), 3u);
  EXPECT_EQ(trace["traceEvents"][0]["name"], "a.o");
  EXPECT_EQ(trace["traceEvents"][0]["dur"], 3000 * 1000);
  EXPECT_EQ(trace["traceEvents"][1]["tid"], 1);  // b overlaps a
  EXPECT_EQ(trace["traceEvents"][2]["tid"], 1);  // c reuses b's lane
  EXPECT_EQ(slowest_steps(steps, 1)[0].target, "a.o");
  std::filesystem::remove_all(dir);
}

TEST(Plan, ShellQuoting) {
  EXPECT_EQ(shell_quote("plain/path-1.0"), "plain/path-1.0");
  EXPECT_EQ(shell_quote("8.0;9.0+PTX"), "'8.0;9.0+PTX'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(Plan, DetectsSetupPyWithoutNinja) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-setup-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(compiles_one_file_at_a_time(dir));  // no setup.py
  std::ofstream(dir / "setup.py") << "cmdclass={'build_ext': BuildExtension}\n";
  EXPECT_FALSE(compiles_one_file_at_a_time(dir));
  // pytorch_scatter's line
  std::ofstream(dir / "setup.py") << "BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)\n";
  EXPECT_TRUE(compiles_one_file_at_a_time(dir));
  std::filesystem::remove_all(dir);
}

TEST(Plan, SetuptoolsOutputsNotACMakeBuildDir) {
  auto dir = std::filesystem::temp_directory_path() / ("archbuild-stale-" + std::to_string(getpid()));
  EXPECT_TRUE(setuptools_build_outputs(dir).empty());  // no build/ at all
  for (const char* sub : {"build/temp.linux-x86_64-cpython-312/csrc", "build/lib.linux-x86_64-cpython-312/pkg",
                          "build/bdist.linux-x86_64", "build/CMakeFiles", "build/library"})
    std::filesystem::create_directories(dir / sub);
  std::ofstream(dir / "build" / "lib.txt") << "a file, not setuptools' dir\n";
  auto outputs = setuptools_build_outputs(dir);
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].filename(), "bdist.linux-x86_64");
  EXPECT_EQ(outputs[1].filename(), "lib.linux-x86_64-cpython-312");
  EXPECT_EQ(outputs[2].filename(), "temp.linux-x86_64-cpython-312");
  std::filesystem::remove_all(dir);
}

#include "cache/cache_key.h"

TEST(CacheKey, SortedTextVersionFirstAndDiff) {
  auto a = CacheKey::compute({{"ref", "v2.9.1"}, {"arch_list", "9.0"}, {"cuda", "13.0.88"}});
  EXPECT_EQ(a.text, "cache_format 1\narch_list 9.0\ncuda 13.0.88\nref v2.9.1\n");
  EXPECT_EQ(a.hash.size(), 64u);
  auto same = CacheKey::compute({{"cuda", "13.0.88"}, {"ref", "v2.9.1"}, {"arch_list", "9.0"}});
  EXPECT_EQ(a.hash, same.hash);
  auto b = CacheKey::compute({{"ref", "v2.9.1"}, {"arch_list", "9.0;12.0"}, {"patch", "x"}});
  EXPECT_NE(a.hash, b.hash);
  auto differences = diff_key_texts(a.text, b.text);
  ASSERT_EQ(differences.size(), 3u);
  EXPECT_EQ(differences[0].key, "arch_list");
  EXPECT_EQ(differences[0].before, "9.0");
  EXPECT_EQ(differences[0].after, "9.0;12.0");
  EXPECT_EQ(differences[1].key, "cuda");
  EXPECT_EQ(differences[1].after, "");
  EXPECT_EQ(differences[2].key, "patch");
  EXPECT_EQ(CacheKey::compute({{"multi", "a\nb"}}).text, "cache_format 1\nmulti a\\nb\n");
}

// cpp_extension calls $CUDA_HOME/bin/nvcc: through the launcher toolkit a real
// nvcc compile goes through real ccache, and the second one is a hit.
TEST(LauncherShims, NvccThroughTheLauncherToolkitIsCached) {
  const std::filesystem::path toolkit = "/usr/local/cuda";
  auto ccache = find_on_path("ccache");
  if (!ccache || !std::filesystem::exists(toolkit / "bin" / "nvcc")) GTEST_SKIP() << "needs ccache and " << toolkit;
  auto root = std::filesystem::temp_directory_path() / ("archbuild-shim-" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  auto shim = launcher_toolkit_dir(root / "cache", "ccache", toolkit);
  EXPECT_NE(shim, launcher_toolkit_dir(root / "cache", "ccache", "/opt/other-cuda"));
  ensure_launcher_toolkit(shim, *ccache, toolkit);
  ensure_launcher_toolkit(shim, *ccache, toolkit);  // a second build refreshes it in place
  EXPECT_TRUE(std::filesystem::exists(shim / "include" / "cuda_runtime.h"));
  EXPECT_TRUE(std::filesystem::is_symlink(shim / "bin" / "ptxas"));
  std::filesystem::create_directories(root / "src");
  std::ofstream(root / "src" / "k.cu") << "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n";
  ProcessOptions options;
  options.working_dir = root / "src";
  options.env_overrides["CCACHE_DIR"] = (root / "ccache").string();
  options.env_overrides["CCACHE_CONFIGPATH"] = (root / "ccache.conf").string();  // no user config
  auto version = run_process({(shim / "bin" / "nvcc").string(), "--version"}, options);
  EXPECT_NE(version.out.find("Cuda compilation tools"), std::string::npos) << version.err;
  for (int i = 0; i < 2; ++i) {
    auto compiled = run_process({(shim / "bin" / "nvcc").string(), "-arch=sm_90", "-c", "k.cu", "-o", "k.o"}, options);
    ASSERT_TRUE(compiled.succeeded()) << compiled.err;
  }
  auto stats = run_process({ccache->string(), "--print-stats"}, options);
  EXPECT_NE(stats.out.find("direct_cache_hit\t1\n"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("cache_miss\t1\n"), std::string::npos) << stats.out;
  std::filesystem::remove_all(root);
}

// setuptools without ninja (pytorch_scatter's use_ninja=False) prints each
// compiler run itself: counted, with the source as the current target.
TEST(Progress, CompilerLinesWithoutNinja) {
  ProgressState state;
  auto t0 = Clock::now();
  state.start = t0;
  EXPECT_TRUE(feed_progress("/c/ccache-bin/gcc -Wsign-compare -DNDEBUG -g -O3 -fPIC -DWITH_CUDA -Icsrc -c csrc/scatter.cpp "
                            "-o build/temp.linux-x86_64-cpython-311/csrc/scatter.o -O3 -fopenmp",
                            state, t0));
  EXPECT_EQ(state.phase, BuildPhase::compile);
  EXPECT_EQ(state.last_target, "csrc/scatter.cpp");
  EXPECT_TRUE(feed_progress("/c/launcher-cuda/ccache-1/bin/nvcc -I/t/include -c csrc/cuda/scatter_cuda.cu -o "
                            "build/temp/csrc/cuda/scatter_cuda.o -D__CUDA_NO_HALF_OPERATORS__ --expt-relaxed-constexpr",
                            state, t0 + std::chrono::seconds(30)));
  auto text = describe_progress(state, t0 + std::chrono::seconds(40));
  EXPECT_EQ(text.counts, "#2");
  EXPECT_EQ(text.current, "csrc/cuda/scatter_cuda.cu");
  EXPECT_EQ(format_status_line(text, 80), "[compile #2] 0:40  csrc/cuda/scatter_cuda.cu");
  EXPECT_TRUE(feed_progress("/usr/bin/g++ -shared -Wl,-O1 build/temp/csrc/scatter.o -L/t/lib64 -lc10 -o "
                            "build/lib.linux-x86_64-cpython-311/torch_scatter/_scatter_cuda.so -s",
                            state, t0));
  EXPECT_EQ(state.phase, BuildPhase::link);
  EXPECT_EQ(state.last_target, "build/lib.linux-x86_64-cpython-311/torch_scatter/_scatter_cuda.so");
  EXPECT_FALSE(feed_progress("gcc version 12.2.0 (Debian 12.2.0-14)", state, t0));  // no -c, no -shared
  EXPECT_FALSE(feed_progress("echo gcc -c a.cpp", state, t0));                       // not a compiler run
  EXPECT_EQ(state.compiles_started, 2u);
}
