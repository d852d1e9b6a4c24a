// libFuzzer target: the simple-index page parsers (`cache verify`, the index
// refresh) must refuse any page cleanly (see fuzz_index_page.h).
#include "fuzz_index_page.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archbuild::fuzz::read_index_page({data, size}, archbuild::fuzz::scratch_dir());
  return 0;
}
