#include "wheel/wheel_relabel.h"

#include <chrono>
#include <initializer_list>
#include <thread>

#include <gtest/gtest.h>
#include <zip.h>

#include "arch/arch_spec.h"
#include "arch/arch_target.h"
#include "arch/cuda_version.h"
#include "test_support.h"
#include "wheel/build_record.h"
#include "wheel/wheel_archive.h"
#include "wheel/wheel_test_support.h"
#include "wheel/wheel_variant.h"

using namespace archbuild;

TEST(LocalVersionLabel, NamesToolkitAndEveryTarget) {
  CudaVersion cuda{13, 0};
  EXPECT_EQ(local_version_label(cuda, arch_list_of({{{9, 0}}})), "cu130.sm90");
  EXPECT_EQ(local_version_label({12, 8}, arch_list_of({{{8, 0}},
                                                       {{9, 0}, ArchVariant::arch_specific},
                                                       {{12, 0}, ArchVariant::plain, true, true}})),
            "cu128.sm80.sm90a.sm120ptx");
  EXPECT_EQ(local_version_label(cuda, arch_list_of({{{8, 6}, ArchVariant::plain, false, true}})), "cu130.compute86");
  EXPECT_EQ(local_version_label(cuda, arch_list_of({{{10, 0}, ArchVariant::family_specific}})), "cu130.sm100f");
}

TEST(LocalVersionLabel, AppendsToAnExistingLocalPartOnce) {
  EXPECT_EQ(version_with_label("2.9.1", "cu130.sm90"), "2.9.1+cu130.sm90");
  EXPECT_EQ(version_with_label("2.9.0a0+git1a2b3c", "cu130.sm90"), "2.9.0a0+git1a2b3c.cu130.sm90");
  EXPECT_EQ(version_with_label("2.9.1+cu130.sm90", "cu130.sm90"), "2.9.1+cu130.sm90");
  EXPECT_EQ(version_with_label("2.9.0a0+git1.cu130.sm90", "cu130.sm90"), "2.9.0a0+git1.cu130.sm90");
}

namespace {
std::filesystem::path write_wheel(const std::filesystem::path& dir) {
  return write_minimal_wheel(dir, "pkg", "py3-none-linux_x86_64");
}
}  // namespace

TEST(RelabelWheel, AddsTheBuildRecordToTheDistInfoWithItsRecordRow) {
  TempDir dir;
  auto wheel = write_wheel(dir.path);
  BuildRecord record{"pkg",    "1.0+cu130.sm90",      "9.0", parse_arch_list("9.0"), "13.0.88",
                     "abc123", {{"arch_list", "9.0"}}};
  auto relabeled = relabel_wheel(wheel, "cu130.sm90", {{BuildRecord::kFileName, record.to_json().dump()}});
  EXPECT_EQ(relabeled.path.filename(), "pkg-1.0+cu130.sm90-py3-none-linux_x86_64.whl");
  EXPECT_FALSE(std::filesystem::exists(wheel));
  auto check = verify_record(relabeled.path);
  EXPECT_TRUE(check.ok()) << (check.errors.empty() ? "" : check.errors.front());
  EXPECT_EQ(check.files_checked, 4u);  // three members and the record
  auto read = read_build_record(relabeled.path);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->arch_list, "9.0");
  EXPECT_EQ(read->key_inputs.at("arch_list"), "9.0");
  // the same label again with a new record: the file is replaced, not added twice
  record.arch_list = "8.0";
  auto again = relabel_wheel(relabeled.path, "cu130.sm90", {{BuildRecord::kFileName, record.to_json().dump()}});
  EXPECT_EQ(again.path, relabeled.path);
  check = verify_record(again.path);
  EXPECT_TRUE(check.ok()) << (check.errors.empty() ? "" : check.errors.front());
  EXPECT_EQ(check.files_checked, 4u);
  EXPECT_EQ(read_build_record(again.path)->arch_list, "8.0");
  // relabeling is reproducible: the same wheel and record give the same bytes, whatever the clock says
  auto first = write_wheel(dir.path);
  auto copy = dir.path / "copy";
  std::filesystem::create_directories(copy);
  std::filesystem::copy_file(first, copy / first.filename());
  const std::string text = record.to_json().dump();
  auto one = relabel_wheel(first, "cu130.sm80", {{BuildRecord::kFileName, text}});
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // zip times have 2 s steps
  auto two = relabel_wheel(copy / first.filename(), "cu130.sm80", {{BuildRecord::kFileName, text}});
  EXPECT_EQ(archbuild::read(one.path), archbuild::read(two.path));
  // a wheel archbuild did not build has none
  EXPECT_FALSE(read_build_record(write_wheel(dir.path)));
  EXPECT_THROW(relabel_wheel(again.path, "cu130.sm90", {{"../escape", "x"}}), UserError);
}

TEST(RelabelWheel, KeepsAnAarch64WheelsPlatformTagAndNamesItsVariant) {
  struct Row {
    const char* tag;        // as the build backend (or auditwheel) names it
    const char* relabeled;  // with the local version label
    const char* variant;    // and as a variant wheel
  } rows[] = {
      {"cp311-cp311-linux_aarch64", "pkg-1.0+cu130.sm110-cp311-cp311-linux_aarch64.whl",
       "pkg-1.0+cu130.sm110-cp311-cp311-linux_aarch64-0a1b2c3d.whl"},
      {"cp311-cp311-manylinux_2_28_aarch64", "pkg-1.0+cu130.sm110-cp311-cp311-manylinux_2_28_aarch64.whl",
       "pkg-1.0+cu130.sm110-cp311-cp311-manylinux_2_28_aarch64-0a1b2c3d.whl"},
  };
  TempDir dir;
  for (const auto& row : rows) {
    auto relabeled = relabel_wheel(write_minimal_wheel(dir.path, "pkg", row.tag), "cu130.sm110", {});
    EXPECT_EQ(relabeled.path.filename(), row.relabeled);
    EXPECT_TRUE(verify_record(relabeled.path).ok());
    EXPECT_EQ(variant_file_name(relabeled.path.filename().string(), "0a1b2c3d"), row.variant);
    auto name = WheelName::parse(row.variant);
    ASSERT_TRUE(name) << row.variant;
    EXPECT_EQ(name->platform, std::string(row.tag).substr(std::string("cp311-cp311-").size()));
    EXPECT_EQ(name->variant, "0a1b2c3d");
  }
}

TEST(BuildRecord, RefusesJsonThatIsNotARecord) {
  EXPECT_THROW(BuildRecord::from_json(nlohmann::json::parse(R"({"format": 2})"), "x"), UserError);
  EXPECT_THROW(BuildRecord::from_json(nlohmann::json::parse(R"({"format": 1, "recipe": 3})"), "x"), UserError);
  EXPECT_THROW(BuildRecord::from_json(nlohmann::json::array(), "x"), UserError);
}
