#pragma once

#include <string>
#include <vector>

namespace archbuild {

// git's url.<base>.insteadOf: a URL starting with `from` is rewritten to
// start with `to`; the longest matching `from` wins, as in git.
struct UrlRewrite {
  std::string from;
  std::string to;
};

class UrlRewriter {
 public:
  UrlRewriter() = default;
  explicit UrlRewriter(std::vector<UrlRewrite> rules) : rules_(std::move(rules)) {}
  // "FROM=TO" as given to --mirror; throws UserError(bad_input).
  void add_option(const std::string& text);
  void add(UrlRewrite rule) { rules_.push_back(std::move(rule)); }
  std::string apply(const std::string& url) const;
  const std::vector<UrlRewrite>& rules() const { return rules_; }

 private:
  std::vector<UrlRewrite> rules_;
};

// Resolves a submodule URL that is relative ("../other.git", "./x") against
// its parent's URL, as git does; absolute URLs come back unchanged.
std::string resolve_submodule_url(const std::string& parent_url, const std::string& url);

}  // namespace archbuild
