// Binaries and wheels: entry points the libFuzzer targets fuzz_inspect and
// fuzz_wheel drive, shared with the unit test that replays
// tests/fuzz/corpus/<target>/ in CI (tests/unit/fuzz/fuzz_corpus_test.cpp), so
// a corpus input runs through exactly the code it was found with. The parsers
// may refuse an input only with UserError (exit 2 or 3), which the entry point
// catches; any other exception, a crash or a sanitizer report is a finding.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "binary/binary_inventory.h"
#include "binary/binary_walker.h"
#include "binary/kernel_names.h"
#include "core/error.h"
#include "fuzz_support.h"
#include "wheel/wheel_archive.h"

namespace archbuild::fuzz {

// `archbuild inspect --verify-cubins --kernels` on one ELF file, cubin or fatbin.
inline void inspect_binary(std::span<const uint8_t> bytes) {
  ByteView view(bytes);
  auto inventory = inspect_bytes("fuzz", view, /*verify_cubins=*/true);
  // The kernel census reads every image's symbol table or PTX text.
  for (const auto& name : list_kernels(inventory, view).all_names()) (void)demangle(name);
  // Touch everything a printer would.
  (void)inventory.sass_counts();
  (void)inventory.ptx_counts();
  (void)inventory.compressions();
  (void)inventory.verdict_for({9, 0});
}

// What `validate` and `cache verify` read of a wheel: RECORD against every
// member, each member's binaries streamed out of the zip, the top-level names.
// libzip opens archives by path, so the bytes become `<scratch>/fuzz-1.0-py3-none-any.whl`.
// True when RECORD was read and checked without a problem.
inline bool read_wheel(std::span<const uint8_t> bytes, const std::filesystem::path& scratch) {
  const auto wheel = scratch / "fuzz-1.0-py3-none-any.whl";
  write_bytes(wheel, bytes);
  bool record_ok = false;
  try {
    record_ok = verify_record(wheel).ok();
  } catch (const UserError&) {
  }
  try {
    walk_binaries(wheel, {.verify_cubins = true}, [](const BinaryInventory& inventory) {
      (void)inventory.sass_counts();
      (void)inventory.verdict_for({9, 0});
    });
  } catch (const UserError&) {
  }
  try {
    (void)wheel_top_level_names(wheel);
  } catch (const UserError&) {
  }
  return record_ok;
}

}  // namespace archbuild::fuzz
