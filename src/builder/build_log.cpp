#include "builder/build_log.h"

namespace archbuild {

namespace {
bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

bool is_error_line(std::string_view line) {
  return contains(line, "error:") || contains(line, "fatal error") || contains(line, "CMake Error") ||
         contains(line, "error :") || contains(line, " error ") || line.rfind("FAILED: ", 0) == 0 ||
         contains(line, "Error:") || contains(line, "ERROR:");
}
}  // namespace

bool is_oom_line(std::string_view line) {
  return contains(line, "Killed signal terminated program") || contains(line, "internal compiler error: Killed") ||
         contains(line, "signal 9") || contains(line, "exit status 137") || contains(line, "Killed (program");
}

void FirstErrorFinder::feed(std::string_view line) {
  std::string text(line);
  tail_.push_back(text);
  if (tail_.size() > kTail) tail_.pop_front();
  if (expect_command_) {  // ninja prints the command on the line after "FAILED: target"
    command_ = text;
    expect_command_ = false;
  }
  if (line.rfind("FAILED: ", 0) == 0 && target_.empty()) {
    target_ = text.substr(8);
    if (target_.rfind("[code=", 0) == 0) target_ = target_.substr(target_.find("] ") + 2);  // ninja 1.12+
    while (!target_.empty() && target_.back() == ' ') target_.pop_back();
    expect_command_ = true;
  }
  if (found_) {
    if (after_left_ > 0) {
      captured_.push_back(text);
      --after_left_;
    }
    return;
  }
  if (is_error_line(line) && !(line.rfind("FAILED: ", 0) == 0)) {
    found_ = true;
    captured_.assign(recent_.begin(), recent_.end());
    captured_.push_back(text);
    after_left_ = kAfter;
    return;
  }
  recent_.push_back(text);
  if (recent_.size() > kBefore) recent_.pop_front();
}

std::vector<std::string> FirstErrorFinder::excerpt() const {
  if (found_) return captured_;
  return {tail_.begin(), tail_.end()};
}

}  // namespace archbuild
