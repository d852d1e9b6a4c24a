#include "ui/status_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/secrets.h"
#include "core/strings.h"

namespace archbuild {

int terminal_width(std::FILE* stream) {
  winsize size{};
  if (ioctl(fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) return std::max(20, std::atoi(columns));
  return 80;
}

StatusLine::StatusLine(std::FILE* stream, std::chrono::milliseconds plain_interval)
    : stream_(stream), plain_interval_(plain_interval) {
  const char* term = std::getenv("TERM");
  interactive_ = isatty(fileno(stream)) && !(term && std::strcmp(term, "dumb") == 0);
}

StatusLine::~StatusLine() { clear(); }

void StatusLine::update(const std::string& text) {
  std::lock_guard lock(mutex_);
  auto now = std::chrono::steady_clock::now();
  if (interactive_) {
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;  // 10 redraws a second at most
    std::string line =
        terminal_safe(secrets::scrub(text)).substr(0, static_cast<size_t>(std::max(0, terminal_width(stream_) - 1)));
    std::fprintf(stream_, "\r\x1b[K%s", line.c_str());
    shown_ = true;
  } else {
    if (shown_ && now - last_ < plain_interval_) return;
    std::fprintf(stream_, "%s\n", terminal_safe(secrets::scrub(text)).c_str());
    shown_ = true;
  }
  std::fflush(stream_);
  last_ = now;
}

void StatusLine::print(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (interactive_ && shown_) std::fprintf(stream_, "\r\x1b[K");
  std::fprintf(stream_, "%s\n", terminal_safe(secrets::scrub(text)).c_str());
  std::fflush(stream_);
  shown_ = false;  // what follows is news: the next status shows at once
}

void StatusLine::clear() {
  std::lock_guard lock(mutex_);
  if (interactive_ && shown_) {
    std::fprintf(stream_, "\r\x1b[K");
    std::fflush(stream_);
  }
  shown_ = false;
}

}  // namespace archbuild
