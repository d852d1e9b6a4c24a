// libFuzzer target: the ELF + fatbin parser must never crash on any input.
// Build: cmake -DARCHBUILD_FUZZ=ON with clang (see docs/TESTING.md).
#include <cstddef>
#include <cstdint>
#include <span>

#include "binary/binary_inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archbuild::ByteView view(std::span<const uint8_t>(data, size));
  auto inventory = archbuild::inspect_bytes("fuzz", view, /*verify_cubins=*/true);
  // Touch everything a printer would.
  (void)inventory.sass_counts();
  (void)inventory.ptx_counts();
  (void)inventory.compressions();
  (void)inventory.verdict_for({9, 0});
  return 0;
}
