// A real wheel for unit tests that need one: wheel/ and pipeline/ tests.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <zip.h>

#include "wheel/wheel_archive.h"

namespace archbuild {

// A minimal real wheel of NAME 1.0, written with libzip, its RECORD correct:
// DIR/NAME-1.0-TAG.whl, a package NAME/ and its .dist-info.
inline std::filesystem::path write_minimal_wheel(const std::filesystem::path& dir, const std::string& name,
                                                 const std::string& tag) {
  const std::vector<std::pair<std::string, std::string>> members = {
      {name + "/__init__.py", "X = 1\n"},
      {name + "-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"},
      {name + "-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: " + tag + "\n"}};
  std::string record;
  for (const auto& [member, data] : members)
    record += member + ",sha256=" + record_digest(data) + "," + std::to_string(data.size()) + "\n";
  record += name + "-1.0.dist-info/RECORD,,\n";
  auto path = dir / (name + "-1.0-" + tag + ".whl");
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  auto add = [&](const std::string& member, const std::string& data) {
    zip_file_add(archive, member.c_str(), zip_source_buffer(archive, data.data(), data.size(), 0), 0);
  };
  for (const auto& [member, data] : members) add(member, data);
  add(name + "-1.0.dist-info/RECORD", record);
  EXPECT_EQ(zip_close(archive), 0);
  return path;
}

}  // namespace archbuild
