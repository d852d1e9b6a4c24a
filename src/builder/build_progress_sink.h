#pragma once

#include <string>

#include "builder/progress.h"

namespace archbuild {

// What the executor tells whoever shows a build's progress: a snapshot per
// tick, permanent notes, and the end. It paints nothing itself; the
// terminal's printer decides width, colour and plain-line fallback (ninja's
// Status habit).
class BuildProgressSink {
 public:
  virtual ~BuildProgressSink() = default;
  virtual void progress(const StatusText& snapshot) = 0;
  virtual void note(const std::string& line) = 0;
  virtual void finished() = 0;
};

}  // namespace archbuild
