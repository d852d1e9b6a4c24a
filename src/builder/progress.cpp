#include "builder/progress.h"

#include <algorithm>

#include "core/strings.h"

namespace archbuild {

std::string to_string(BuildPhase phase) {
  switch (phase) {
    case BuildPhase::starting: return "starting";
    case BuildPhase::configure: return "configure";
    case BuildPhase::compile: return "compile";
    case BuildPhase::link: return "link";
    case BuildPhase::wheel: return "wheel";
  }
  return "?";
}

namespace {

// "[123/4567] rest" without a regex: this runs on every line of a long build.
bool parse_ninja(std::string_view line, size_t& done, size_t& total, std::string_view& rest) {
  if (line.size() < 5 || line[0] != '[') return false;
  size_t i = 1, a = 0, b = 0;
  size_t digits = 0;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') a = a * 10 + (line[i++] - '0'), ++digits;
  if (!digits || i >= line.size() || line[i] != '/') return false;
  ++i;
  digits = 0;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') b = b * 10 + (line[i++] - '0'), ++digits;
  if (!digits || i >= line.size() || line[i] != ']') return false;
  done = a;
  total = b;
  rest = line.substr(std::min(line.size(), i + 2));
  return true;
}

// "[ 42%] rest"
bool parse_cmake_percent(std::string_view line, int& percent) {
  if (line.size() < 6 || line[0] != '[') return false;
  size_t i = 1;
  while (i < line.size() && line[i] == ' ') ++i;
  int value = 0, digits = 0;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') value = value * 10 + (line[i++] - '0'), ++digits;
  if (!digits || digits > 3 || i + 1 >= line.size() || line[i] != '%' || line[i + 1] != ']') return false;
  percent = value;
  return true;
}

// "[/path/]gcc ... -c src.cpp -o obj.o" (compile: the source) or
// "g++ ... -shared ... -o lib.so" (link: the output). Only the first word
// names the program, so an echo of such a line does not count.
enum class CompilerRun { none, compile, link };
CompilerRun parse_compiler_line(std::string_view line, std::string& target) {
  std::string_view program = line.substr(0, line.find(' '));
  if (program.size() == line.size()) return CompilerRun::none;
  if (auto slash = program.rfind('/'); slash != std::string_view::npos) program.remove_prefix(slash + 1);
  static constexpr std::string_view compilers[] = {"gcc", "g++", "c++", "clang", "clang++", "nvcc", "ccache"};
  bool known = program == "cc";
  for (auto name : compilers) known = known || program.ends_with(name);
  if (!known) return CompilerRun::none;
  const auto words = split_any(line, " ");
  std::string compiled, output;
  bool shared = false;
  for (size_t i = 1; i < words.size(); ++i) {
    const bool has_argument = i + 1 < words.size();
    if (words[i] == "-c" && has_argument) compiled = words[i + 1];
    if (words[i] == "-o" && has_argument) output = words[i + 1];
    shared = shared || words[i] == "-shared";
  }
  if (!compiled.empty()) {
    target = compiled;
    return CompilerRun::compile;
  }
  if (shared && !output.empty()) {
    target = output;
    return CompilerRun::link;
  }
  return CompilerRun::none;
}

}  // namespace

static bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }
static bool ends_with(std::string_view text, std::string_view part) {
  return text.size() >= part.size() && text.substr(text.size() - part.size()) == part;
}

// A ninja line is printed when its step ends: "Building CUDA object X"
// (CMake) ends with the output, a command (cpp_extension's ninja file) holds
// "-o X" as two words.
static bool finishes(std::string_view rest, std::string_view output) {
  if (ends_with(rest, output)) return true;
  const std::string option = "-o " + std::string(output);
  for (size_t at = rest.find(option); at != std::string_view::npos; at = rest.find(option, at + 1)) {
    const size_t after = at + option.size();
    if ((at == 0 || rest[at - 1] == ' ') && (after == rest.size() || rest[after] == ' ')) return true;
  }
  return false;
}

bool feed_progress(std::string_view line, ProgressState& state, std::chrono::steady_clock::time_point now) {
  ++state.lines;
  // pip -v indents the build's output ("  [1/2] c++ ..."): the same lines.
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  size_t done = 0, total = 0;
  std::string_view rest;
  bool changed = false;
  if (parse_ninja(line, done, total, rest)) {
    if (state.finished == 0 && state.first_step == std::chrono::steady_clock::time_point{}) state.first_step = now;
    if (total < state.total && done < state.finished) state.first_step = now;  // a new ninja run (next sub-build)
    state.finished = done;
    state.total = total;
    state.last_target = std::string(rest);
    for (auto it = state.running.begin(); it != state.running.end();)
      it = finishes(rest, it->first) ? state.running.erase(it) : std::next(it);
    state.phase = contains(rest, "Linking") || ends_with(rest, ".so") ? BuildPhase::link : BuildPhase::compile;
    return true;
  }
  int percent = 0;
  if (parse_cmake_percent(line, percent)) {
    state.percent = percent;
    state.phase = BuildPhase::compile;
    changed = true;
  }
  if (line.empty()) return changed;
  if (state.total == 0) {
    std::string target;
    if (auto run = parse_compiler_line(line, target); run != CompilerRun::none) {
      if (run == CompilerRun::compile) ++state.compiles_started;
      state.phase = run == CompilerRun::compile ? BuildPhase::compile : BuildPhase::link;
      state.last_target = std::move(target);
      return true;
    }
  }
  // Not "running bdist_wheel" or "Building wheel for x": those come first,
  // before the compiles; these come when the wheel's members are written.
  bool wheel = contains(line, ".whl") || line.rfind("adding '", 0) == 0;
  if (wheel) {
    changed = changed || state.phase != BuildPhase::wheel;
    state.phase = BuildPhase::wheel;
  } else if (state.phase == BuildPhase::starting &&
             (line.rfind("-- ", 0) == 0 || contains(line, "running build_ext") || contains(line, "Configuring"))) {
    state.phase = BuildPhase::configure;
    changed = true;
  }
  return changed;
}

std::string format_duration(double seconds) {
  long total = static_cast<long>(seconds + 0.5);
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  else
    std::snprintf(text, sizeof text, "%ld:%02ld", total / 60, total % 60);
  return text;
}

StatusText describe_progress(const ProgressState& state, std::chrono::steady_clock::time_point now) {
  StatusText text;
  text.phase = to_string(state.phase);
  double elapsed = std::chrono::duration<double>(now - state.start).count();
  text.elapsed = format_duration(elapsed);
  // What the forecast leaves: shown until steps give a rate, then weighed
  // against the rate's ETA by the share of steps done (ninja's rate knows
  // nothing of the configure before it or the link tail after).
  std::optional<double> predicted_left;
  if (state.predicted_seconds && *state.predicted_seconds > elapsed)
    predicted_left = *state.predicted_seconds - elapsed;
  if (state.total > 0) {
    text.counts = std::to_string(state.finished) + "/" + std::to_string(state.total);
    text.percent = std::to_string(state.finished * 100 / state.total) + "%";
    double stepping = std::chrono::duration<double>(now - state.first_step).count();
    if (state.finished > 0 && stepping > 0.5) {
      double rate = state.finished / stepping;
      char buffer[32];
      // Heavy units (flash-attn's take minutes each) read per minute, not "0.0/s".
      if (rate >= 0.1)
        std::snprintf(buffer, sizeof buffer, rate >= 10 ? "%.0f/s" : "%.1f/s", rate);
      else if (rate * 60 >= 0.1)
        std::snprintf(buffer, sizeof buffer, "%.1f/min", rate * 60);
      else
        std::snprintf(buffer, sizeof buffer, "%.0f min/step", 1 / (rate * 60));
      text.rate = buffer;
      if (state.finished < state.total) {
        double by_rate = (state.total - state.finished) / rate;
        double done = static_cast<double>(state.finished) / static_cast<double>(state.total);
        text.eta = format_duration(predicted_left ? (1 - done) * *predicted_left + done * by_rate : by_rate);
      }
    }
  }
  if (text.eta.empty() && predicted_left && state.phase != BuildPhase::wheel)
    text.eta = format_duration(*predicted_left);
  if (state.total > 0) {
    // counts and percent are set
  } else if (state.percent) {
    text.percent = std::to_string(*state.percent) + "%";
  } else if (state.compiles_started > 0) {
    text.counts = "#" + std::to_string(state.compiles_started);  // no total is known
  }
  if (state.running.size() > 1) text.running = std::to_string(state.running.size()) + " running";
  if (!state.running.empty()) {
    auto oldest = std::min_element(state.running.begin(), state.running.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
    text.current = oldest->first + " (" + format_duration(std::chrono::duration<double>(now - oldest->second).count()) +
                   ")";
  } else {
    text.current = state.last_target;
  }
  return text;
}

std::string format_status_line(const StatusText& text, size_t width) {
  std::string line = "[" + text.phase;
  if (!text.counts.empty()) line += " " + text.counts;
  if (!text.percent.empty()) line += " " + text.percent;
  line += "] " + text.elapsed;
  if (!text.rate.empty()) line += " " + text.rate;
  if (!text.eta.empty()) line += " ETA " + text.eta;
  if (!text.running.empty()) line += " " + text.running;
  if (!text.current.empty() && line.size() + 2 < width) {
    std::string current = text.current;
    size_t room = width - line.size() - 2;
    if (current.size() > room) current = "..." + current.substr(current.size() - (room > 3 ? room - 3 : 0));
    line += "  " + current;
  }
  if (line.size() > width) line.resize(width);
  return line;
}

}  // namespace archbuild
