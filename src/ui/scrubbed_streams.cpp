#include "ui/scrubbed_streams.h"

#include <iostream>
#include <mutex>
#include <streambuf>
#include <string>

#include "core/secrets.h"
#include "core/strings.h"

namespace archbuild {

namespace {

// Holds a line until its newline (or a flush), then hands it scrubbed to the
// stream's own buffer. A line is cut at 64 KiB: a secret across that cut
// is the one it can miss, never a line held without bound.
class ScrubbingBuffer : public std::streambuf {
 public:
  explicit ScrubbingBuffer(std::streambuf* target) : target_(target) {}

 protected:
  // Locked: a matrix's worker threads print through the same stream, and
  // the held line is this buffer's own state (stdio's was locked for them).
  int_type overflow(int_type c) override {
    std::lock_guard lock(mutex_);
    return put(c);
  }
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    std::lock_guard lock(mutex_);
    for (std::streamsize i = 0; i < size; ++i)
      if (traits_type::eq_int_type(put(traits_type::to_int_type(data[i])), traits_type::eof())) return i;
    return size;
  }
  int sync() override {
    std::lock_guard lock(mutex_);
    return pass_on() && target_->pubsync() == 0 ? 0 : -1;
  }

 private:
  static constexpr size_t kLongestLine = 64 << 10;
  int_type put(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    line_ += traits_type::to_char_type(c);
    if (c == '\n' || line_.size() >= kLongestLine) return pass_on() ? c : traits_type::eof();
    return c;
  }
  bool pass_on() {
    if (line_.empty()) return true;
    const auto text = terminal_safe(secrets::scrub(line_));
    line_.clear();
    return target_->sputn(text.data(), static_cast<std::streamsize>(text.size())) ==
           static_cast<std::streamsize>(text.size());
  }
  std::streambuf* target_;
  std::string line_;
  std::mutex mutex_;
};

}  // namespace

void scrub_standard_streams() {
  // Never destroyed: static objects print on their way out too.
  static auto* out = new ScrubbingBuffer(std::cout.rdbuf());
  static auto* err = new ScrubbingBuffer(std::cerr.rdbuf());
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
}

}  // namespace archbuild
