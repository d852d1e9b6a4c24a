// libFuzzer target: the recipe and config loaders (TOML) must refuse any
// file cleanly (see fuzz_toml.h).
#include "fuzz_toml.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archbuild::fuzz::load_toml_files({data, size}, archbuild::fuzz::scratch_dir());
  return 0;
}
