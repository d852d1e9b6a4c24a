// libFuzzer target: the wheel (zip) reader behind `validate` and `cache
// verify` must refuse any input cleanly (see fuzz_binaries.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_binaries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archbuild::fuzz::read_wheel({data, size}, archbuild::fuzz::scratch_dir());
  return 0;
}
