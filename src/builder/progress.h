#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

enum class BuildPhase { starting, configure, compile, link, wheel };
std::string to_string(BuildPhase phase);

// What the build's output has said so far, updated line by line.
struct ProgressState {
  BuildPhase phase = BuildPhase::starting;
  size_t finished = 0;  // ninja [N/M]
  size_t total = 0;
  std::optional<int> percent;   // CMake/make [ 42%]
  std::string last_target;      // the last edge ninja reported (or source a compiler was run on)
  size_t compiles_started = 0;  // compiler runs the build printed itself (no ninja counts)
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point first_step;  // when N/M first moved (rate and ETA start here)
  // Edges known to be running (from the launcher's start events), by start time.
  std::map<std::string, std::chrono::steady_clock::time_point> running;
  size_t lines = 0;
  // The plan's forecast of the whole build step: the ETA from the first
  // second, blended into the rate's as steps finish.
  std::optional<double> predicted_seconds;
};

// Parses ninja's "[N/M] desc", CMake's "[ 42%]", compiler command lines a
// build prints itself when it runs no ninja ("gcc ... -c a.cpp -o a.o", as
// setuptools does with cpp_extension's use_ninja=False: counted, no total),
// and the phase markers (configure: CMake's "-- " messages or setuptools'
// build_ext; link: ninja edges that link or make a .so, "-shared" runs;
// wheel: lines writing the wheel's members). No regex: it runs on every line
// of a build. Returns true when what a status line shows
// changed.
bool feed_progress(std::string_view line, ProgressState& state, std::chrono::steady_clock::time_point now);

struct StatusText {
  std::string phase;
  std::string counts;   // "412/5123"
  std::string percent;  // "8%"
  std::string elapsed;  // "12:03"
  std::string rate;     // "2.3/s"
  std::string eta;      // "34:10"
  std::string running;  // "6 running": compiles known to run at once, when more than one
  std::string current;  // longest-running target, or the last one reported
};

// The pure formatter behind the status line.
StatusText describe_progress(const ProgressState& state, std::chrono::steady_clock::time_point now);
// One line, cut to `width` columns:
// "[compile 412/5123 8%] 12:03 2.3/s ETA 34:10 6 running  aten/.../Foo.cu.o"
std::string format_status_line(const StatusText& text, size_t width);
std::string format_duration(double seconds);  // "12:03", "1:02:03"

}  // namespace archbuild
