// libFuzzer target: PEP 440 version checking must take any string in linear
// time without recursion (the std::regex it replaced overflowed the stack on
// a 30,000-component version), and the bytes that pass must be a version's.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "source/pep440_version.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (archbuild::is_pep440_version(text)) {
    if (text.size() > archbuild::kMaxVersionLength) std::abort();
    for (char c : text)  // a version is printable ASCII without spaces
      if (c <= ' ' || c > '~') std::abort();
  }
  return 0;
}
