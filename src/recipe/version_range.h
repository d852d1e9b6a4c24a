#pragma once

#include <optional>
#include <string>
#include <vector>

namespace archbuild {

// A release number from a ref: "v2.9.1" -> 2.9.1, "2.10.0-rc3" -> 2.10.0.
// Branches and commits ("main", "a1b2c3d") have none.
std::optional<std::vector<int>> version_of_ref(const std::string& ref);

// ">=2.5,<2.8", "==2.9.1", ">2.11", "*" (any). A ref with no version number
// (main, a commit) counts as newer than every release: it matches exactly the
// ranges with no upper bound.
class VersionRange {
 public:
  // Throws std::invalid_argument with a reason for a malformed range.
  static VersionRange parse(const std::string& text);
  bool contains(const std::optional<std::vector<int>>& version) const;
  const std::string& text() const { return text_; }

 private:
  struct Clause {
    std::string op;
    std::vector<int> version;
  };
  std::string text_;
  std::vector<Clause> clauses_;
};

}  // namespace archbuild
