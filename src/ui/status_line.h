#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

namespace archbuild {

// One live line on a terminal (rewritten in place, cut to the terminal's
// width), or, when the stream is not a terminal (CI logs), plain lines at
// most every `plain_interval`, with no control characters. Thread-safe.
class StatusLine {
 public:
  explicit StatusLine(std::FILE* stream = stderr, std::chrono::milliseconds plain_interval = std::chrono::seconds(5));
  ~StatusLine();
  void update(const std::string& text);
  // Prints a permanent line (clearing the live one first).
  void print(const std::string& text);
  void clear();
  bool interactive() const { return interactive_; }

 private:
  std::FILE* stream_;
  bool interactive_;
  std::chrono::milliseconds plain_interval_;
  std::chrono::steady_clock::time_point last_;
  bool shown_ = false;
  std::mutex mutex_;
};

int terminal_width(std::FILE* stream);

}  // namespace archbuild
