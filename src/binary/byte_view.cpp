#include "binary/byte_view.h"

#include <unistd.h>

#include <cerrno>

namespace archbuild {

void ByteView::copy_into(void* out, uint64_t offset, uint64_t length, const char* what) const {
  require(offset, length, what);
  if (length == 0) return;
  if (source_) {
    source_->read(out, offset, length, what);
    return;
  }
  if (fd_ < 0) {
    std::memcpy(out, memory_.data() + offset, length);
    return;
  }
  auto* cursor = static_cast<uint8_t*>(out);
  while (length > 0) {
    ssize_t got = ::pread(fd_, cursor, length, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw ParseError(offset, std::string("read failed for ") + what);
    cursor += got;
    offset += static_cast<uint64_t>(got);
    length -= static_cast<uint64_t>(got);
  }
}

}  // namespace archbuild
