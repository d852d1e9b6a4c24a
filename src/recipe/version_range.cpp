#include "recipe/version_range.h"

#include <cctype>
#include <stdexcept>

#include "core/strings.h"

namespace archbuild {

namespace {
std::optional<std::vector<int>> parse_numbers(const std::string& text) {
  std::vector<int> parts;
  size_t i = 0;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) break;
    int value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) value = value * 10 + (text[i++] - '0');
    parts.push_back(value);
    if (i < text.size() && text[i] == '.')
      ++i;
    else
      break;
  }
  if (parts.empty()) return std::nullopt;
  return parts;
}

int compare(std::vector<int> a, std::vector<int> b) {
  size_t n = std::max(a.size(), b.size());
  a.resize(n, 0);
  b.resize(n, 0);
  return a < b ? -1 : a > b ? 1 : 0;
}
}  // namespace

std::optional<std::vector<int>> version_of_ref(const std::string& ref) {
  std::string text = ref;
  if (!text.empty() && (text[0] == 'v' || text[0] == 'V')) text.erase(0, 1);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  if (text.find('.') == std::string::npos) return std::nullopt;  // "1234567" is a commit, not a version
  return parse_numbers(text);
}

VersionRange VersionRange::parse(const std::string& text) {
  VersionRange range;
  range.text_ = trim(text);
  if (range.text_.empty() || range.text_ == "*") return range;
  for (const auto& piece : split_any(range.text_, ",")) {
    std::string clause = trim(piece);
    size_t op_length = 0;
    for (const char* op : {">=", "<=", "==", ">", "<"})
      if (clause.rfind(op, 0) == 0) {
        op_length = std::string(op).size();
        break;
      }
    if (op_length == 0) throw std::invalid_argument("clause '" + clause + "' needs one of >= > <= < ==");
    auto numbers = parse_numbers(trim(clause.substr(op_length)));
    if (!numbers || trim(clause.substr(op_length)).find_first_not_of("0123456789.") != std::string::npos)
      throw std::invalid_argument("clause '" + clause + "' needs a version like 2.9 or 2.9.1");
    range.clauses_.push_back({clause.substr(0, op_length), *numbers});
  }
  return range;
}

bool VersionRange::contains(const std::optional<std::vector<int>>& version) const {
  for (const auto& clause : clauses_) {
    if (!version) {
      if (clause.op == "<" || clause.op == "<=" || clause.op == "==") return false;
      continue;
    }
    int c = compare(*version, clause.version);
    bool ok = clause.op == ">="   ? c >= 0
              : clause.op == ">"  ? c > 0
              : clause.op == "<=" ? c <= 0
              : clause.op == "<"  ? c < 0
                                  : c == 0;
    if (!ok) return false;
  }
  return true;
}

}  // namespace archbuild
