#pragma once

#include "builder/build_progress_sink.h"
#include "ui/status_line.h"

namespace archbuild {

// Build progress on one status line: cut to the terminal's width, the
// "[phase N/M %]" part cyan on a terminal unless NO_COLOR.
class BuildProgressLine : public BuildProgressSink {
 public:
  explicit BuildProgressLine(StatusLine& status) : status_(status) {}
  void progress(const StatusText& snapshot) override;
  void note(const std::string& line) override { status_.print(line); }
  void finished() override { status_.clear(); }

 private:
  StatusLine& status_;
};

}  // namespace archbuild
