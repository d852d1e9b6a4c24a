#include "wheel/wheel_archive.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <zip.h>

using namespace archbuild;

TEST(Wheel, NameAndRecordDigest) {
  auto name = WheelName::parse("torch-2.9.1+cu130.sm90-cp311-cp311-manylinux_2_28_x86_64.whl");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->name, "torch");
  EXPECT_EQ(name->version, "2.9.1+cu130.sm90");
  EXPECT_EQ(name->platform, "manylinux_2_28_x86_64");
  auto with_build = WheelName::parse("demo-1.0-1-py3-none-any.whl");
  ASSERT_TRUE(with_build.has_value());
  EXPECT_EQ(with_build->build, "1");
  EXPECT_FALSE(WheelName::parse("demo-1.0.tar.gz").has_value());
  EXPECT_FALSE(WheelName::parse("demo-py3-none-any.whl").has_value());
  // sha256("") in RECORD's urlsafe base64 without padding
  EXPECT_EQ(record_digest(""), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}

namespace {

// A deflated one-member zip written by libzip, then its size fields patched
// to `declared` (local header and central directory alike): a zip that lies.
std::filesystem::path lying_zip(const std::string& name, const std::string& content,
                                std::optional<uint32_t> declared = std::nullopt) {
  auto path = std::filesystem::temp_directory_path() /
              ("archbuild-unit-" + std::to_string(::getpid()) + "-" + name + ".zip");
  std::filesystem::remove(path);
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  EXPECT_NE(archive, nullptr);
  zip_source_t* source = zip_source_buffer(archive, content.data(), content.size(), 0);
  zip_int64_t index = zip_file_add(archive, name.c_str(), source, 0);
  zip_set_file_compression(archive, index, ZIP_CM_DEFLATE, 9);
  EXPECT_EQ(zip_close(archive), 0);
  if (declared) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    auto patch = [&](const char* signature, size_t field) {
      auto at = bytes.find(signature, 0, 4);
      EXPECT_NE(at, std::string::npos);
      std::memcpy(bytes.data() + at + field, &*declared, 4);
    };
    patch("PK\3\4", 22);
    patch("PK\1\2", 24);
    file.seekp(0);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  return path;
}

// The zip opened for reading, and removed afterwards.
struct OpenZip {
  explicit OpenZip(std::filesystem::path zip_path)
      : path(std::move(zip_path)), archive(zip_open(path.c_str(), ZIP_RDONLY, nullptr)) {
    EXPECT_NE(archive, nullptr);
  }
  ~OpenZip() {
    zip_discard(archive);
    std::filesystem::remove(path);
  }
  std::filesystem::path path;
  zip_t* archive;
};

std::string pattern(size_t size) {
  std::string text(size, '\0');
  uint32_t state = 12345;
  for (auto& c : text) c = static_cast<char>((state = state * 1103515245 + 12345) >> 24);  // barely compressible
  return text;
}

}  // namespace

TEST(ZipMemberStream, ReadsSkipsAndRewindsAnHonestMember) {
  auto content = pattern(300000);
  OpenZip zip(lying_zip("honest.so", content));
  ZipMemberStream stream(zip.archive, 0);
  EXPECT_EQ(stream.name(), "honest.so");
  EXPECT_EQ(stream.size(), content.size());
  std::string head(10, '\0');
  EXPECT_EQ(stream.read(head.data(), head.size()), 10u);
  EXPECT_EQ(head, content.substr(0, 10));
  stream.skip_to(250000);
  std::string rest(100000, '\0');
  EXPECT_EQ(stream.read(rest.data(), rest.size()), 50000u);  // the declared end, CRC checked there
  EXPECT_EQ(rest.substr(0, 50000), content.substr(250000));
  EXPECT_EQ(stream.read(rest.data(), rest.size()), 0u);
  stream.skip_to(5);  // backwards: read again from the start
  EXPECT_EQ(stream.position(), 5u);
  EXPECT_EQ(read_zip_member(zip.archive, 0, "honest.so"), content);
  EXPECT_EQ(record_digest(stream), record_digest(content.substr(5)));
}

TEST(ZipMemberStream, ADeclaredSizeThatLiesIsAnErrorNamingTheMember) {
  auto content = pattern(70000);
  {
    OpenZip zip(lying_zip("longer.so", content, 90000));  // declares more than it holds
    ZipMemberStream stream(zip.archive, 0);
    std::string bytes(90000, '\0');
    try {
      stream.read(bytes.data(), bytes.size());
      FAIL() << "read past the data";
    } catch (const ZipMemberError& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_EQ(std::string(e.what()), "wheel member longer.so: " + e.problem());
      EXPECT_NE(e.problem().find("ends after 70000 bytes of the 90000 bytes"), std::string::npos) << e.problem();
    }
  }
  {
    OpenZip zip(lying_zip("shorter.so", content, 4096));  // holds more than it declares
    ZipMemberStream stream(zip.archive, 0);
    std::string bytes(8192, '\0');
    EXPECT_THROW(
        {
          try {
            stream.read(bytes.data(), bytes.size());
          } catch (const ZipMemberError& e) {
            EXPECT_NE(e.problem().find("holds more than the 4096 bytes"), std::string::npos) << e.problem();
            throw;
          }
        },
        ZipMemberError);
  }
}

TEST(ZipMemberStream, ASizeNoDeflateStreamReachesIsRefusedBeforeReading) {
  // 3.75 GiB from a few hundred compressed bytes: refused at open, nothing allocated.
  OpenZip zip(lying_zip("bomb.so", std::string(1000, 'x'), 0xF0000000u));
  try {
    ZipMemberStream stream(zip.archive, 0);
    FAIL() << "opened";
  } catch (const ZipMemberError& e) {
    EXPECT_NE(e.problem().find("declares 4026531840 bytes from"), std::string::npos) << e.problem();
  }
  EXPECT_THROW(read_zip_member(zip.archive, 0, "bomb.so"), ZipMemberError);
}

TEST(ZipMemberStream, ReadIntoMemoryIsCapped) {
  OpenZip zip(lying_zip("RECORD", std::string(5000, 'r')));
  EXPECT_EQ(read_zip_member(zip.archive, 0, "RECORD", 5000).size(), 5000u);
  try {
    read_zip_member(zip.archive, 0, "RECORD", 4999);
    FAIL() << "read beyond the cap";
  } catch (const ZipMemberError& e) {
    EXPECT_NE(std::string(e.what()).find("wheel member RECORD: declares 5000 bytes, more than the 4999"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_zip_member(zip.archive, -1, "METADATA"), ZipMemberError);
}

TEST(Wheel, TopLevelNamesIncludeNamespacePackagesAndSayWhichHoldNativeCode) {
  char name[] = "/tmp/archbuild-toplevel-XXXXXX";
  const std::filesystem::path dir = mkdtemp(name);
  const auto path = dir / "mixed-1.0-cp312-cp312-linux_x86_64.whl";
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  for (const char* member : {// simple-knn's shape: a namespace package (no __init__.py) holding the extension module
                             "simple_knn/_C.cpython-312-x86_64-linux-gnu.so",
                             // Deformable-DETR's ops: the native module at the top, pure-Python packages beside it
                             "MultiScaleDeformableAttention.cpython-312-x86_64-linux-gnu.so", "functions/__init__.py",
                             "functions/ms_deform_attn_func.py", "modules/__init__.py",
                             // a regular package with a versioned library, a bundled-libraries dir, data, metadata
                             "pkg/__init__.py", "pkg/lib/libpkg.so.1", "mixed.libs/libgomp-a34b3233.so.1.0.0",
                             "mixed-1.0.data/scripts/tool", "mixed-1.0.dist-info/METADATA", "helper.py"}) {
    static const std::string empty;
    zip_file_add(archive, member, zip_source_buffer(archive, empty.data(), 0, 0), 0);
  }
  ASSERT_EQ(zip_close(archive), 0);
  EXPECT_EQ(wheel_top_level_names(path), (std::vector<std::string>{"MultiScaleDeformableAttention", "functions",
                                                                   "helper", "modules", "pkg", "simple_knn"}));
  EXPECT_EQ(wheel_native_top_level_names(path),
            (std::vector<std::string>{"MultiScaleDeformableAttention", "pkg", "simple_knn"}));
  // importing the namespace package loads nothing: its extension module is imported itself
  EXPECT_EQ(wheel_extension_packages(path), (std::vector<std::string>{"simple_knn._C"}));
  std::filesystem::remove_all(dir);
}

TEST(Wheel, ExtensionPackagesAreTheSubpackagesHoldingNativeLibraries) {
  char name[] = "/tmp/archbuild-extpkg-XXXXXX";
  const std::filesystem::path dir = mkdtemp(name);
  const auto path = dir / "mixed-1.0-cp312-cp312-linux_x86_64.whl";
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  for (const char* member :
       {"torchmdnet/__init__.py", "torchmdnet/extensions/__init__.py", "torchmdnet/extensions/torchmdnet_extensions.so",
        "torch_scatter/__init__.py", "torch_scatter/_scatter_cuda.so", "top_ext.cpython-312-x86_64-linux-gnu.so",
        "mixed.libs/libgomp-a34b3233.so.1.0.0", "deep/__init__.py", "deep/a/__init__.py", "deep/a/b/__init__.py",
        "deep/a/b/k.so", "nopkg/__init__.py", "nopkg/data/k.so"}) {
    static const std::string empty;
    zip_file_add(archive, member, zip_source_buffer(archive, empty.data(), 0, 0), 0);
  }
  ASSERT_EQ(zip_close(archive), 0);
  // Top-level packages (imported anyway), .libs dirs and data dirs without __init__.py are not listed.
  EXPECT_EQ(wheel_extension_packages(path), (std::vector<std::string>{"deep.a", "deep.a.b", "torchmdnet.extensions"}));
  std::filesystem::remove_all(dir);
}
