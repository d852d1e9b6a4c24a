#include "binary/binary_walker.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <vector>

#include <zip.h>

#include "wheel/wheel_archive.h"

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

// Random access over a member that can only be read forward: the last 32
// MiB read stay in memory, a read behind them reads the member again from its
// start, and a read far ahead skips without keeping what lies between. ELF
// inspection reads the header, the section table at the end (the name table
// just before it), then the fatbin sections, so a library over 32 MiB is
// decompressed about one and a half times, a smaller one once.
class MemberSource : public ByteSource {
 public:
  static constexpr uint64_t kChunk = 1 << 20;
  static constexpr size_t kWindowChunks = 32;

  explicit MemberSource(ZipMemberStream& stream) : stream_(stream) {}

  void read(void* out, uint64_t offset, uint64_t length, const char* what) override {
    auto* cursor = static_cast<uint8_t*>(out);
    try {
      while (length > 0) {
        if (offset < window_start_) restart();
        uint64_t window_end = stream_.position();
        if (offset >= window_end) {
          advance(offset);
          continue;
        }
        uint64_t into = offset - window_start_;
        const auto& chunk = chunks_[into / kChunk];
        uint64_t at = into % kChunk;
        uint64_t n = std::min<uint64_t>(length, chunk.size() - at);
        std::memcpy(cursor, chunk.data() + at, n);
        cursor += n;
        offset += n;
        length -= n;
      }
    } catch (const ZipMemberError& e) {
      throw ParseError(offset, std::string(what) + ": " + e.problem());
    }
  }

 private:
  void restart() {
    stream_.rewind();
    chunks_.clear();
    window_start_ = 0;
  }

  // Reads the chunk holding `offset`, skipping unbuffered what lies far before it.
  void advance(uint64_t offset) {
    uint64_t chunk_start = offset / kChunk * kChunk;
    if (chunk_start > stream_.position() + kWindowChunks * kChunk) {
      stream_.skip_to(chunk_start);
      chunks_.clear();
      window_start_ = chunk_start;
    }
    std::vector<uint8_t> chunk(std::min<uint64_t>(kChunk, stream_.size() - stream_.position()));
    stream_.read(chunk.data(), chunk.size());
    chunks_.push_back(std::move(chunk));
    if (chunks_.size() > kWindowChunks) {
      chunks_.pop_front();
      window_start_ += kChunk;
    }
  }

  ZipMemberStream& stream_;
  std::deque<std::vector<uint8_t>> chunks_;  // [window_start_, stream_.position()), kChunk each but the last
  uint64_t window_start_ = 0;
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
      const char* raw_name = zip_get_name(archive, i, 0);
      std::string name = raw_name ? raw_name : "";
      if (name.empty() || name.back() == '/') continue;
      std::string display = path.string() + "!" + name;
      try {
        ZipMemberStream stream(archive, i);
        uint8_t magic[4] = {};
        auto got = stream.read(magic, sizeof magic);
        ++stats.files_seen;
        if (!looks_like_binary(std::span<const uint8_t>(magic, got))) continue;
        stream.rewind();
        // Streamed through a window, never held whole: the section table of a
        // 456 MB library lies at its end, its fatbins in the middle.
        MemberSource source(stream);
        ByteView view(source, stream.size());
        emit(inspect_bytes(display, view, options.verify_cubins), &view);
      } catch (const ZipMemberError& e) {
        emit_error(display, "cannot read member: " + e.problem());
      }
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
  else if (!std::filesystem::is_regular_file(status))
    // a FIFO or a device (/dev/zero) would block or never end
    fail_bad_input(path.string() + " is not a regular file or a directory");
  else
    walker.file(path, true);
  return walker.stats;
}

}  // namespace archbuild
