#include "core/interrupt.h"

#include <signal.h>
#include <unistd.h>

namespace archbuild {

namespace {
void exit_interrupted(int) {
  static const char message[] = "\narchbuild: interrupted\n";
  ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  ::_exit(130);
}
}  // namespace

void install_interrupt_exit() {
  struct sigaction action {};
  action.sa_handler = exit_interrupted;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace archbuild
