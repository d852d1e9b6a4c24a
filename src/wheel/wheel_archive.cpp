#include "wheel/wheel_archive.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <openssl/evp.h>
#include <zip.h>

#include "core/error.h"
#include "core/strings.h"

namespace archbuild {

std::optional<WheelName> WheelName::parse(const std::string& filename) {
  if (filename.size() < 5 || filename.substr(filename.size() - 4) != ".whl") return std::nullopt;
  auto parts = split_any(filename.substr(0, filename.size() - 4), "-");
  if (parts.size() < 5 || parts.size() > 7) return std::nullopt;
  WheelName name;
  name.name = parts[0];
  name.version = parts[1];
  size_t i = 2;
  // A build tag starts with a digit, a python tag never does: six parts are
  // a build tag or (PEP 825) a variant label at the end; seven are both.
  const bool build = parts.size() == 7 || (parts.size() == 6 && std::isdigit(static_cast<unsigned char>(parts[2][0])));
  if (build) name.build = parts[i++];
  name.python = parts[i++];
  name.abi = parts[i++];
  name.platform = parts[i++];
  if (i < parts.size()) name.variant = parts[i];
  if (parts.size() == 7 && !std::isdigit(static_cast<unsigned char>(name.build[0]))) return std::nullopt;
  return name;
}

namespace {

// Deflate's longest match (258 bytes) costs at least two bits: no stream
// expands more than about 1032:1, so a larger declared size is a lie. The
// same bound is applied to the other methods, which wheels do not use.
constexpr uint64_t kMaxExpansion = 1032;
constexpr uint64_t kExpansionSlack = 1024;  // headers of tiny streams

// "" for an entry libzip cannot name, instead of constructing a string from NULL.
std::string member_name(zip_t* archive, zip_int64_t index) {
  const char* name = zip_get_name(archive, index, 0);
  return name ? name : "";
}

std::string plural_bytes(uint64_t count) { return std::to_string(count) + (count == 1 ? " byte" : " bytes"); }

std::string encode_record_digest(const unsigned char* digest, unsigned int length) {
  unsigned char encoded[128];
  int written = EVP_EncodeBlock(encoded, digest, static_cast<int>(length));
  std::string text(reinterpret_cast<char*>(encoded), static_cast<size_t>(written));
  for (auto& c : text) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!text.empty() && text.back() == '=') text.pop_back();
  return text;
}

}  // namespace

std::string record_digest(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return encode_record_digest(digest, length);
}

std::string record_digest(ZipMemberStream& stream) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
  unsigned char buffer[1 << 16];
  while (size_t got = stream.read(buffer, sizeof buffer)) EVP_DigestUpdate(context.get(), buffer, got);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  return encode_record_digest(digest, length);
}

ZipMemberStream::ZipMemberStream(zip_t* archive, int64_t index) : archive_(archive), index_(index) {
  zip_stat_t info;
  zip_stat_init(&info);
  if (index < 0 || zip_stat_index(archive, index, 0, &info) != 0)
    throw ZipMemberError("#" + std::to_string(index), "no such member");
  name_ = info.name ? info.name : "#" + std::to_string(index);
  if ((info.valid & ZIP_STAT_ENCRYPTION_METHOD) && info.encryption_method != ZIP_EM_NONE)
    throw ZipMemberError(name_, "is encrypted");
  constexpr auto kNeeded = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((info.valid & kNeeded) != kNeeded) throw ZipMemberError(name_, "its zip entry gives no size");
  size_ = info.size;
  compressed_size_ = info.comp_size;
  if (info.comp_method == ZIP_CM_STORE && size_ != compressed_size_)
    throw ZipMemberError(name_, "stored uncompressed, yet declares " + plural_bytes(size_) + " for " +
                                    plural_bytes(compressed_size_) + " of data (a corrupt or hostile zip)");
  if (compressed_size_ > (UINT64_MAX - kExpansionSlack) / kMaxExpansion ||
      size_ > compressed_size_ * kMaxExpansion + kExpansionSlack)
    throw ZipMemberError(name_, "declares " + plural_bytes(size_) + " from " + plural_bytes(compressed_size_) +
                                    " of compressed data, more than any deflate stream expands to "
                                    "(a corrupt or hostile zip)");
  open();
}

ZipMemberStream::~ZipMemberStream() { close(); }

void ZipMemberStream::open() {
  file_ = zip_fopen_index(archive_, index_, 0);
  if (!file_) throw ZipMemberError(name_, std::string("cannot open: ") + zip_strerror(archive_));
  position_ = 0;
  end_checked_ = false;
}

void ZipMemberStream::close() {
  if (file_) zip_fclose(file_);
  file_ = nullptr;
}

size_t ZipMemberStream::read(void* out, size_t length) {
  if (!file_) throw ZipMemberError(name_, "read after an error");
  uint64_t wanted = std::min<uint64_t>(length, size_ - position_);
  auto* cursor = static_cast<uint8_t*>(out);
  size_t got = 0;
  while (got < wanted) {
    zip_int64_t n = zip_fread(file_, cursor + got, wanted - got);
    if (n < 0) {
      std::string why = zip_file_strerror(file_);
      close();
      throw ZipMemberError(name_, "corrupt data after " + plural_bytes(position_ + got) + ": " + why);
    }
    if (n == 0) {
      close();
      throw ZipMemberError(name_, "its data ends after " + plural_bytes(position_ + got) + " of the " +
                                      plural_bytes(size_) + " its zip entry declares");
    }
    got += static_cast<size_t>(n);
  }
  position_ += got;
  if (position_ == size_ && !end_checked_) {
    end_checked_ = true;
    // At the declared end: libzip checks the CRC only once it reads EOF, and
    // would go on returning data past a size that lies.
    uint8_t extra;
    zip_int64_t n = zip_fread(file_, &extra, 1);
    if (n != 0) {
      std::string why = n < 0 ? std::string(zip_file_strerror(file_)) : "";
      close();
      if (n > 0) throw ZipMemberError(name_, "holds more than the " + plural_bytes(size_) + " its zip entry declares");
      throw ZipMemberError(name_, "corrupt data at its end: " + why);
    }
  }
  return got;
}

void ZipMemberStream::skip_to(uint64_t offset) {
  if (offset < position_) rewind();
  if (offset > size_)
    throw ZipMemberError(name_, "offset " + std::to_string(offset) + " lies past its declared " + plural_bytes(size_));
  uint8_t scratch[1 << 16];
  while (position_ < offset) read(scratch, std::min<uint64_t>(sizeof scratch, offset - position_));
}

void ZipMemberStream::rewind() {
  close();
  open();
}

std::string read_zip_member(zip_t* archive, int64_t index, const std::string& name, uint64_t max_bytes) {
  if (index < 0) throw ZipMemberError(name, "missing from the wheel");
  ZipMemberStream stream(archive, index);
  if (stream.size() > max_bytes)
    throw ZipMemberError(name, "declares " + plural_bytes(stream.size()) + ", more than the " +
                                   plural_bytes(max_bytes) + " read into memory at once");
  std::string bytes(stream.size(), '\0');
  stream.read(bytes.data(), bytes.size());
  return bytes;
}

std::vector<std::string> record_row(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        fields.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        fields.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::string record_row_text(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto& field = fields[i];
    if (i) line += ',';
    if (field.find_first_of(",\"\n") == std::string::npos) {
      line += field;
      continue;
    }
    line += '"';
    for (char c : field) line += c == '"' ? std::string("\"\"") : std::string(1, c);
    line += '"';
  }
  return line;
}

std::string find_dist_info(zip_t* archive) {
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    std::string name = member_name(archive, i);
    auto slash = name.find('/');
    if (slash != std::string::npos && name.substr(slash) == "/RECORD" && slash > 10 &&
        name.substr(slash - 10, 10) == ".dist-info")
      return name.substr(0, slash);
  }
  return {};
}

void ZipDiscard::operator()(zip_t* archive) const { zip_discard(archive); }

ReadOnlyWheel open_wheel_for_reading(const std::filesystem::path& wheel) {
  int error_code = 0;
  ReadOnlyWheel archive(zip_open(wheel.c_str(), ZIP_RDONLY, &error_code));
  if (!archive)
    fail_bad_input(wheel.string() + " is not a readable wheel (zip error " + std::to_string(error_code) + ")");
  return archive;
}

RecordCheck verify_record(const std::filesystem::path& wheel) {
  auto guard = open_wheel_for_reading(wheel);
  zip_t* archive = guard.get();
  RecordCheck check;
  // What pip and the wheel spec refuse: a file name that is not a wheel's,
  // members that would land outside site-packages, and one name twice (which
  // copy wins depends on the unpacker).
  if (!WheelName::parse(wheel.filename().string()))
    check.errors.push_back(wheel.filename().string() +
                           ": not a wheel file name (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)");
  std::map<std::string, zip_int64_t> members;
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    std::string name = member_name(archive, i);
    const std::filesystem::path member(name);
    bool escapes = member.is_absolute() || name.find('\\') != std::string::npos;
    for (const auto& part : member)
      if (part == "..") escapes = true;
    if (escapes) check.errors.push_back(name + ": a member path outside the install location (absolute or ..)");
    if (!name.empty() && name.back() != '/' && !members.emplace(name, i).second)
      check.errors.push_back(name + ": in the wheel twice");
  }
  auto dist_info = find_dist_info(archive);
  if (dist_info.empty()) fail_bad_input(wheel.string() + " has no *.dist-info/RECORD: not a wheel");
  std::string record_name = dist_info + "/RECORD";
  auto record_index = members.find(record_name);
  std::istringstream record(
      read_zip_member(archive, record_index == members.end() ? -1 : record_index->second, record_name));
  std::map<std::string, bool> listed;
  std::string line;
  while (std::getline(record, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto fields = record_row(line);
    if (fields.size() != 3) {
      check.errors.push_back("RECORD line is not path,hash,size: " + line);
      continue;
    }
    const auto& path = fields[0];
    listed[path] = true;
    if (path == record_name) continue;  // RECORD does not hash itself
    auto member = members.find(path);
    if (member == members.end()) {
      check.errors.push_back(path + ": listed in RECORD but missing from the wheel");
      continue;
    }
    if (fields[1].rfind("sha256=", 0) != 0) {
      check.errors.push_back(path + ": RECORD has no sha256 for it ('" + fields[1] + "')");
      continue;
    }
    // Streamed: a 1 GB library is hashed without being held in memory.
    ZipMemberStream stream(archive, member->second);
    auto digest = record_digest(stream);
    ++check.files_checked;
    if (digest != fields[1].substr(7))
      check.errors.push_back(path + ": sha256 does not match RECORD (the file was changed after the wheel was built)");
    else if (!fields[2].empty() && fields[2] != std::to_string(stream.size()))
      check.errors.push_back(path + ": size " + std::to_string(stream.size()) + " does not match RECORD's " +
                             fields[2]);
  }
  for (const auto& [name, index] : members) {
    bool signature = name.size() > 4 &&
                     (name.substr(name.size() - 4) == ".jws" || name.substr(name.size() - 4) == ".p7s");
    if (!listed.count(name) && name != record_name && !signature)
      check.errors.push_back(name + ": in the wheel but not in RECORD");
  }
  return check;
}

namespace {

bool is_python_identifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool is_native_library(const std::string& member) {
  const auto file = member.substr(member.rfind('/') + 1);
  return file.ends_with(".so") || file.find(".so.") != std::string::npos;
}

// The importable top-level name a member belongs to, or "": a package dir
// (regular, or a namespace package: an identifier, not `x.libs` or `x.data`),
// or a top-level module (module.py, _ext.cpython-311-x86_64-linux-gnu.so).
std::string top_level_name_of(const std::string& member) {
  auto slash = member.find('/');
  if (slash == std::string::npos)
    return member.ends_with(".py") || member.ends_with(".so") ? member.substr(0, member.find('.')) : "";
  auto top = member.substr(0, slash);
  return is_python_identifier(top) ? top : "";
}

// "a/b" (or "a"): every component a Python identifier, so "a.b" imports.
bool is_module_path(const std::string& path) {
  for (const auto& part : split_any(path, "/"))
    if (!is_python_identifier(part)) return false;
  return !path.empty();
}

}  // namespace

std::vector<std::string> wheel_top_level_names(const std::filesystem::path& wheel) {
  auto guard = open_wheel_for_reading(wheel);
  zip_t* archive = guard.get();
  std::set<std::string> names;
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    std::string name = member_name(archive, i);
    const auto top = top_level_name_of(name);
    if (top.empty()) continue;
    const auto rest = name.find('/') == std::string::npos ? "" : name.substr(name.find('/') + 1);
    // a module, a regular package, or a namespace package holding modules (simple_knn/_C.so without __init__.py)
    if (rest.empty() || rest == "__init__.py" || rest.ends_with(".py") || is_native_library(rest)) names.insert(top);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> wheel_native_top_level_names(const std::filesystem::path& wheel) {
  auto guard = open_wheel_for_reading(wheel);
  zip_t* archive = guard.get();
  std::set<std::string> names;
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    std::string name = member_name(archive, i);
    if (!is_native_library(name)) continue;
    if (auto top = top_level_name_of(name); !top.empty()) names.insert(top);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> wheel_extension_packages(const std::filesystem::path& wheel) {
  auto guard = open_wheel_for_reading(wheel);
  zip_t* archive = guard.get();
  std::set<std::string> members, packages;
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) members.insert(member_name(archive, i));
  for (const auto& name : members) {
    const auto file = name.substr(name.rfind('/') + 1);
    if (!file.ends_with(".so") && file.find(".so.") == std::string::npos) continue;
    const auto slash = name.rfind('/');
    // An extension module in a namespace package (simple_knn/_C.cpython-312-*.so, no __init__.py):
    // importing the package loads nothing, so the module itself is imported.
    if (const auto stem = file.substr(0, file.find('.'));
        slash != std::string::npos && !members.count(name.substr(0, slash) + "/__init__.py") &&
        (file.find(".cpython-") != std::string::npos || file.find(".abi3.") != std::string::npos) &&
        is_module_path(name.substr(0, slash)) && is_module_path(stem)) {
      std::string dotted = name.substr(0, slash) + "." + stem;
      std::replace(dotted.begin(), dotted.end(), '/', '.');
      packages.insert(dotted);
    }
    // Its package, and each package above it up to the top level (already imported).
    for (auto dir = name.substr(0, name.rfind('/') == std::string::npos ? 0 : name.rfind('/'));
         dir.find('/') != std::string::npos; dir = dir.substr(0, dir.rfind('/'))) {
      if (!members.count(dir + "/__init__.py")) break;  // not a package: a .libs dir, data
      std::string dotted = dir;
      std::replace(dotted.begin(), dotted.end(), '/', '.');
      packages.insert(dotted);
    }
  }
  return {packages.begin(), packages.end()};
}

}  // namespace archbuild
