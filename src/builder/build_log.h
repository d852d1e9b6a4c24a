#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archbuild {

// True for the lines a compiler prints when the kernel's OOM killer took it.
bool is_oom_line(std::string_view line);

// Finds the first real error in a build's output (the first `error:`, `fatal
// error`, `CMake Error`, or ninja's `FAILED:`), with a few lines of context
// and the failing command, so a failure is not 3,000 lines up.
class FirstErrorFinder {
 public:
  void feed(std::string_view line);
  bool found() const { return found_; }
  // The lines to show: context before, the error, and a few after; when no
  // line looked like an error, the last lines of the output.
  std::vector<std::string> excerpt() const;
  const std::string& failing_command() const { return command_; }
  const std::string& failed_target() const { return target_; }

 private:
  static constexpr size_t kBefore = 3, kAfter = 6;
  static constexpr size_t kTail = 8;
  std::deque<std::string> recent_;
  std::deque<std::string> tail_;
  std::vector<std::string> captured_;
  size_t after_left_ = 0;
  bool found_ = false;
  bool expect_command_ = false;
  std::string command_, target_;
};

}  // namespace archbuild
