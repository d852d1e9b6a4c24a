#include "source/pep440_version.h"

#include <cctype>
#include <initializer_list>

namespace archbuild {

namespace {

// A cursor over the text; each `take_*` consumes on success and leaves the
// position alone on failure.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  bool done() const { return at_ == text_.size(); }
  size_t position() const { return at_; }
  void reset(size_t position) { at_ = position; }

  bool take_digits() {
    size_t start = at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    return at_ > start;
  }
  bool take_char(char wanted) {
    if (at_ < text_.size() && std::tolower(static_cast<unsigned char>(text_[at_])) == wanted) {
      ++at_;
      return true;
    }
    return false;
  }
  bool take_separator() { return take_char('-') || take_char('_') || take_char('.'); }
  // The longest of `words` that follows, case-insensitively.
  bool take_word(std::initializer_list<std::string_view> words) {
    size_t best = 0;
    for (auto word : words)
      if (word.size() > best && matches(word)) best = word.size();
    at_ += best;
    return best > 0;
  }
  bool take_alnum_run() {
    size_t start = at_;
    while (at_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[at_]))) ++at_;
    return at_ > start;
  }

 private:
  bool matches(std::string_view word) const {
    if (text_.size() - at_ < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(text_[at_ + i])) != word[i]) return false;
    return true;
  }
  std::string_view text_;
  size_t at_ = 0;
};

// [-_.]? WORD [-_.]? N?  (pre-release, post-release and dev segments)
bool take_labelled(Cursor& in, std::initializer_list<std::string_view> words) {
  const size_t start = in.position();
  in.take_separator();
  if (!in.take_word(words)) {
    in.reset(start);
    return false;
  }
  in.take_separator();  // pip's pattern takes a separator after the label even without a number ("1.0a.")
  in.take_digits();     // "1.0a" is 1.0a0
  return true;
}

}  // namespace

bool is_pep440_version(std::string_view text) {
  if (text.empty() || text.size() > kMaxVersionLength) return false;
  Cursor in(text);
  in.take_char('v');
  // epoch: N!
  const size_t release_start = in.position();
  if (in.take_digits() && !in.take_char('!')) in.reset(release_start);
  // release: N(.N)*
  if (!in.take_digits()) return false;
  for (;;) {
    const size_t dot = in.position();
    if (!in.take_char('.')) break;
    if (!in.take_digits()) {
      in.reset(dot);  // "1.0.post1": the dot belongs to the next segment
      break;
    }
  }
  take_labelled(in, {"a", "b", "c", "rc", "alpha", "beta", "pre", "preview"});
  // post-release: -N, or [-_.]? (post|rev|r) [-_.]? N?
  const size_t post_start = in.position();
  if (!(in.take_char('-') && in.take_digits())) {
    in.reset(post_start);
    take_labelled(in, {"post", "rev", "r"});
  }
  take_labelled(in, {"dev"});
  // local label: +[a-z0-9]+([-_.][a-z0-9]+)*
  if (in.take_char('+')) {
    if (!in.take_alnum_run()) return false;
    while (!in.done()) {
      if (!in.take_separator() || !in.take_alnum_run()) return false;
    }
  }
  return in.done();
}

}  // namespace archbuild
