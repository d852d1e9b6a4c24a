#pragma once

#include <map>
#include <string>
#include <vector>

namespace archbuild {

// The cache format version: first line of every key text (ccache's habit).
// 2: values escape backslashes too (1 escaped only newlines, so two values could share a text).
constexpr int kCacheFormatVersion = 2;

// A build's cache key (vcpkg-tool's habit): its inputs, which only
// KeyInputs::of (cache/key_inputs.h) spells, as sorted `key value` lines,
// format version first; the key is the sha256 of that text, and the text is
// stored beside the wheel so that "why was this a miss?" is a diff.
struct CacheKey {
  std::string text;  // "cache_format 1\narch_list 9.0\n..."
  std::string hash;  // sha256 hex of text

  static CacheKey compute(const std::map<std::string, std::string>& inputs);
};

struct KeyDifference {
  std::string key;
  std::string before;  // "" when absent
  std::string after;
};

// A key text's `key value` lines as a map.
std::map<std::string, std::string> parse_key_text(const std::string& text);

// Parses two key texts and lists what differs, by key.
std::vector<KeyDifference> diff_key_texts(const std::string& before, const std::string& after);

}  // namespace archbuild
