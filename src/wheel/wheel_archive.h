#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

typedef struct zip zip_t;
typedef struct zip_file zip_file_t;

namespace archbuild {

// A wheel member that cannot be read as its zip entry declares it.
class ZipMemberError : public UserError {
 public:
  ZipMemberError(const std::string& member, const std::string& problem)
      : UserError(ExitCode::bad_input, "wheel member " + member + ": " + problem), problem_(problem) {}
  const std::string& problem() const { return problem_; }  // without the member's name

 private:
  std::string problem_;
};

// One member's bytes in order, held to the size its entry declares: never
// more than that, and an error (ZipMemberError) when the data ends earlier,
// runs longer or fails its CRC. Uses one small buffer whatever the size, so a
// hostile size field costs no memory.
class ZipMemberStream {
 public:
  // Throws ZipMemberError when the member cannot be opened, or declares more
  // bytes than its compressed data could expand to (a lying size field).
  ZipMemberStream(zip_t* archive, int64_t index);
  ~ZipMemberStream();
  ZipMemberStream(const ZipMemberStream&) = delete;
  ZipMemberStream& operator=(const ZipMemberStream&) = delete;

  const std::string& name() const { return name_; }
  uint64_t size() const { return size_; }  // as declared
  uint64_t compressed_size() const { return compressed_size_; }
  uint64_t position() const { return position_; }
  // Up to `length` bytes; fewer only at the declared end, where it returns 0.
  size_t read(void* out, size_t length);
  // Skips forward to `offset` (decompressing what lies before it).
  void skip_to(uint64_t offset);
  // Back to the first byte: compressed data cannot be read backwards, so
  // this reopens the member.
  void rewind();

 private:
  void open();
  void close();

  zip_t* archive_;
  int64_t index_;
  std::string name_;
  uint64_t size_ = 0, compressed_size_ = 0, position_ = 0;
  bool end_checked_ = false;
  zip_file_t* file_ = nullptr;
};

// What read_zip_member holds in memory at most: RECORD and METADATA are text,
// a few MB for the largest wheels.
constexpr uint64_t kMaxMemberInMemory = 64ull << 20;

// A member's bytes; throws ZipMemberError (bad_input) naming the member when
// it is unreadable, not the size it declares, or larger than `max_bytes`.
std::string read_zip_member(zip_t* archive, int64_t index, const std::string& name,
                            uint64_t max_bytes = kMaxMemberInMemory);
// A wheel opened read-only, closed (discarded) with its handle; throws
// UserError(bad_input) "<wheel> is not a readable wheel (zip error N)".
struct ZipDiscard {
  void operator()(zip_t* archive) const;
};
using ReadOnlyWheel = std::unique_ptr<zip_t, ZipDiscard>;
ReadOnlyWheel open_wheel_for_reading(const std::filesystem::path& wheel);

// "torch-2.9.1.dist-info" (the directory holding RECORD), or "" when there is none.
std::string find_dist_info(zip_t* archive);

// PEP 427: {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl
struct WheelName {
  std::string name, version, build, python, abi, platform;
  std::string variant;  // a variant wheel's label (PEP 825: a last segment after the platform)
  static std::optional<WheelName> parse(const std::string& filename);
};

struct RecordCheck {
  size_t files_checked = 0;
  std::vector<std::string> errors;  // one line per problem, naming the member
  bool ok() const { return errors.empty(); }
};

// Verifies the wheel's RECORD (PEP 376/427): every member's sha256
// (urlsafe base64, no padding) and size, no member missing from RECORD, no
// RECORD entry missing from the wheel. Reads from the zip, never unpacks.
// Throws UserError(bad_input) when the file is not a readable wheel.
RecordCheck verify_record(const std::filesystem::path& wheel);

// urlsafe base64 without padding, as RECORD writes digests.
std::string record_digest(const std::string& bytes);
// The same over the rest of a member, read to its end (its size checked).
std::string record_digest(ZipMemberStream& stream);

// One RECORD row: path,hash,size (CSV; paths with commas are quoted), and back.
std::vector<std::string> record_row(const std::string& line);
std::string record_row_text(const std::vector<std::string>& fields);

// The importable top-level names a wheel installs ("torch", "fixture",
// "_C" for a bare extension module, "simple_knn" for a namespace package
// holding simple_knn/_C.so).
std::vector<std::string> wheel_top_level_names(const std::filesystem::path& wheel);

// Those of them that hold a native library (a .so under the package, or the
// module itself): what a kernel test imports and the op exerciser must
// import. The others (pure Python beside them) are imported best effort.
std::vector<std::string> wheel_native_top_level_names(const std::filesystem::path& wheel);

// The subpackages (dotted, below the top level) that hold the wheel's native
// libraries: "torchmdnet.extensions" for torchmdnet/extensions/x.so. A
// package may load its ops only when such a subpackage is imported. An
// extension module inside a namespace package (no __init__.py) is named
// itself: "simple_knn._C" for simple_knn/_C.cpython-312-x86_64-linux-gnu.so.
std::vector<std::string> wheel_extension_packages(const std::filesystem::path& wheel);

}  // namespace archbuild
