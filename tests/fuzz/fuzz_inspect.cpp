// libFuzzer target: the ELF + fatbin parser must never crash on any input.
// Build: cmake -DARCHBUILD_FUZZ=ON with clang (see docs/TESTING.md).
#include <cstddef>
#include <cstdint>

#include "fuzz_binaries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archbuild::fuzz::inspect_binary({data, size});
  return 0;
}
