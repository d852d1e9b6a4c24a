#include "binary/binary_walker.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>

#include <zip.h>

namespace archbuild {

namespace {

// An open file descriptor, closed on scope exit.
struct FileHandle {
  int fd = -1;
  explicit FileHandle(const std::filesystem::path& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~FileHandle() {
    if (fd >= 0) ::close(fd);
  }
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
};

struct Walker {
  const WalkOptions& options;
  const std::function<void(const BinaryInventory&)>& sink;
  WalkStats stats;

  void emit(const BinaryInventory& inventory, const ByteView* bytes = nullptr) {
    ++stats.binaries;
    if (inventory.has_cuda_code()) ++stats.with_cuda_code;
    if (inventory.error) ++stats.unreadable;
    if (bytes && options.with_bytes) options.with_bytes(inventory, *bytes);
    sink(inventory);
  }

  void emit_error(const std::string& path, const std::string& message) {
    BinaryInventory inventory;
    inventory.path = path;
    inventory.error = message;
    emit(inventory);
  }

  void file(const std::filesystem::path& path, bool named) {
    ++stats.files_seen;
    if (is_zip_file(path)) return wheel(path);
    FileHandle handle(path);
    struct stat info {};
    if (handle.fd < 0 || ::fstat(handle.fd, &info) != 0)
      return emit_error(path.string(), std::string("cannot open: ") + std::strerror(errno));
    ByteView bytes(handle.fd, static_cast<uint64_t>(info.st_size));
    uint8_t magic[4] = {};
    if (info.st_size < 4 || ::pread(handle.fd, magic, 4, 0) != 4 || !looks_like_binary(magic)) {
      if (named) emit_error(path.string(), "not an ELF file, cubin, fatbin or wheel");
      return;
    }
    emit(inspect_bytes(path.string(), bytes, options.verify_cubins), &bytes);
  }

  void wheel(const std::filesystem::path& path) {
    int error_code = 0;
    zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &error_code);
    if (!archive) {
      zip_error_t error;
      zip_error_init_with_code(&error, error_code);
      std::string message = std::string("cannot open as a zip/wheel: ") + zip_error_strerror(&error);
      zip_error_fini(&error);
      return emit_error(path.string(), message);
    }
    std::unique_ptr<zip_t, decltype(&zip_discard)> guard(archive, zip_discard);
    zip_int64_t count = zip_get_num_entries(archive, 0);
    for (zip_int64_t i = 0; i < count; ++i) {
      zip_stat_t info;
      if (zip_stat_index(archive, i, 0, &info) != 0 || !(info.valid & ZIP_STAT_SIZE)) continue;
      std::string name = info.name ? info.name : "";
      if (name.empty() || name.back() == '/') continue;
      std::string display = path.string() + "!" + name;
      zip_file_t* member = zip_fopen_index(archive, i, 0);
      if (!member) {
        emit_error(display, std::string("cannot read member: ") + zip_strerror(archive));
        continue;
      }
      std::unique_ptr<zip_file_t, decltype(&zip_fclose)> member_guard(member, zip_fclose);
      std::vector<uint8_t> bytes(std::min<zip_uint64_t>(info.size, 4));
      if (zip_fread(member, bytes.data(), bytes.size()) != static_cast<zip_int64_t>(bytes.size())) {
        emit_error(display, "cannot read member: truncated or corrupt zip data");
        continue;
      }
      ++stats.files_seen;
      if (!looks_like_binary(bytes)) continue;
      bytes.resize(info.size);
      zip_int64_t rest = static_cast<zip_int64_t>(info.size) - 4;
      if (rest > 0 && zip_fread(member, bytes.data() + 4, rest) != rest) {
        emit_error(display, "cannot read member: truncated or corrupt zip data");
        continue;
      }
      ByteView view(bytes);
      emit(inspect_bytes(display, view, options.verify_cubins), &view);
    }
  }

  void directory(const std::filesystem::path& root) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (auto it = std::filesystem::recursive_directory_iterator(
             root, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_symlink(ec)) continue;
      if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    if (ec) emit_error(root.string(), "cannot walk directory: " + ec.message());
    std::sort(files.begin(), files.end());  // stable, readable output order
    for (const auto& path : files) file(path, false);
  }
};

}  // namespace

bool is_zip_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

WalkStats walk_binaries(const std::filesystem::path& path, const WalkOptions& options,
                        const std::function<void(const BinaryInventory&)>& sink) {
  Walker walker{options, sink, {}};
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    walker.emit_error(path.string(), "no such file or directory");
  else if (std::filesystem::is_directory(status))
    walker.directory(path);
  else
    walker.file(path, true);
  return walker.stats;
}

}  // namespace archbuild
