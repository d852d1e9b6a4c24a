#include "doctor/package_scan.h"

#include <filesystem>

#include "binary/binary_walker.h"

namespace archbuild {

std::string package_name_for(const std::string& site_dir, const std::string& path) {
  auto relative = std::filesystem::path(path).lexically_relative(site_dir);
  auto part = relative.begin();
  if (part == relative.end()) return path;
  std::string top = part->string();
  std::error_code ec;
  auto top_dir = std::filesystem::path(site_dir) / top;
  bool namespace_package = std::filesystem::is_directory(top_dir, ec) &&
                           !std::filesystem::exists(top_dir / "__init__.py", ec);
  if (namespace_package && ++part != relative.end() && std::next(part) != relative.end())
    return top + "/" + part->string();
  return top;
}

std::vector<PackageBinaries> scan_packages(const std::vector<std::string>& site_dirs) {
  std::vector<PackageBinaries> packages;
  for (const auto& site_dir : site_dirs) {
    walk_binaries(site_dir, {}, [&](const BinaryInventory& inventory) {
      if (!inventory.has_cuda_code() && !inventory.error) return;
      auto name = package_name_for(site_dir, inventory.path);
      auto it = std::find_if(packages.begin(), packages.end(),
                             [&](const PackageBinaries& p) { return p.name == name && p.site_dir == site_dir; });
      if (it == packages.end()) {
        packages.push_back({name, site_dir, {}});
        it = std::prev(packages.end());
      }
      it->files.push_back(inventory);
    });
  }
  return packages;
}

}  // namespace archbuild
