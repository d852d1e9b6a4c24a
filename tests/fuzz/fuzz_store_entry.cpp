// libFuzzer target: a store entry's JSON files must be refused cleanly by
// every reader (see fuzz_store_entry.h).
#include "fuzz_store_entry.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archbuild::fuzz::read_store_entry({data, size}, archbuild::fuzz::scratch_dir());
  return 0;
}
