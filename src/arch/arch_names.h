#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arch/arch_target.h"

namespace archbuild {

// How the tool that reads an arch list names archs, and which it accepts:
// PyTorch's CMake (select_compute_arch.cmake) for torch and CMake projects,
// torch.utils.cpp_extension of one torch release for extensions. "Hopper"
// is 9.0 to the first and 9.0+PTX to the second, and cpp_extension raises
// ValueError on an arch outside its list (8.8, say): a name means what
// its consumer means, and `all` keeps what the consumer takes.
struct ArchNames {
  std::string consumer;  // "PyTorch's CMake", "torch 2.11's cpp_extension"
  // Name -> its targets in the consumer's spelling ("9.0+PTX"), combined
  // names ("Ampere+Tegra") first, as the consumer matches them.
  std::vector<std::pair<std::string, std::string>> named;
  // "Blackwell+PTX": PTX for every member (CMake) or only the newest.
  bool ptx_for_every_member = false;
  // The targets the consumer takes, spelled "9.0" or "9.0a" (PTX aside);
  // nullopt: whatever the toolkit can target.
  std::optional<std::vector<std::string>> accepted;

  bool accepts(const ArchTarget& target) const;
  // The targets of `item` when it is one of the names (with an optional
  // +PTX, in any case); nullopt when it is not a name.
  std::optional<std::vector<ArchTarget>> expand(std::string_view item) const;
};

// PyTorch's CMake names: Maxwell ... Hopper (9.0), Blackwell (10.0;12.0).
const ArchNames& pytorch_cmake_arch_names();

// cpp_extension's names and accepted archs per torch release, read from a
// table (toolchains/torch/cpp_extension_arches.toml, taken from each
// release's torch/utils/cpp_extension.py).
class CppExtensionArchTable {
 public:
  // Throws UserError(bad_input) naming the file and what is wrong.
  static CppExtensionArchTable load(const std::filesystem::path& file);
  static CppExtensionArchTable load_default();  // data_dir()/toolchains/torch/cpp_extension_arches.toml
  // The newest release at or below `torch_version` ("2.9.1+cu128"); the
  // newest known when it is empty, unreadable, or newer than every entry
  // (then `consumer` says which release's rules were used).
  ArchNames for_torch(const std::string& torch_version) const;
  std::vector<std::string> releases() const;  // "2.11", ... newest first

 private:
  struct Release {
    int major = 0, minor = 0;
    ArchNames names;
  };
  std::vector<Release> releases_;  // newest first
};

}  // namespace archbuild
