#include "ui/scrubbed_streams.h"

#include <iostream>
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
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    line_ += traits_type::to_char_type(c);
    if (c == '\n' || line_.size() >= kLongestLine) return pass_on() ? c : traits_type::eof();
    return c;
  }
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    for (std::streamsize i = 0; i < size; ++i)
      if (traits_type::eq_int_type(overflow(traits_type::to_int_type(data[i])), traits_type::eof())) return i;
    return size;
  }
  int sync() override { return pass_on() && target_->pubsync() == 0 ? 0 : -1; }

 private:
  static constexpr size_t kLongestLine = 64 << 10;
  bool pass_on() {
    if (line_.empty()) return true;
    const auto text = terminal_safe(secrets::scrub(line_));
    line_.clear();
    return target_->sputn(text.data(), static_cast<std::streamsize>(text.size())) ==
           static_cast<std::streamsize>(text.size());
  }
  std::streambuf* target_;
  std::string line_;
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
