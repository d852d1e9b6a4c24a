#pragma once

#include <stdexcept>
#include <string>

#include "core/exit_code.h"

namespace archbuild {

// An error a user can act on. It carries the exit code it maps to; main()
// is the one place that turns it into a message on stderr and that code.
class UserError : public std::runtime_error {
 public:
  UserError(ExitCode code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

[[noreturn]] inline void fail_bad_input(std::string message) {
  throw UserError(ExitCode::bad_input, std::move(message));
}
[[noreturn]] inline void fail_environment(std::string message) {
  throw UserError(ExitCode::environment, std::move(message));
}
[[noreturn]] inline void fail_work(std::string message) { throw UserError(ExitCode::work_failed, std::move(message)); }

}  // namespace archbuild
