#include "source/sdist_archive.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <zip.h>
#include <zlib.h>

#include "core/error.h"
#include "core/strings.h"
#include "source/patch_apply.h"
#include "source/tree_snapshot.h"
#include "wheel/project_name.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {

constexpr size_t kMaxPathBytes = 4096;
constexpr size_t kMaxComponentBytes = 255;
constexpr uint64_t kMaxHeaderExtensionBytes = 1 << 20;  // a pax header or GNU long name
constexpr uint64_t kMaxSymlinkTargetBytes = 4096;       // PATH_MAX with its NUL: what symlink(2) takes

std::string byte_count(uint64_t bytes) { return std::to_string(bytes) + " bytes"; }

[[noreturn]] void refuse_archive(const std::string& archive, const std::string& why) {
  fail_bad_input("sdist " + archive + " " + why + "; archbuild refuses the whole sdist");
}

[[noreturn]] void refuse_member(const std::string& archive, const std::string& member, const std::string& why) {
  fail_bad_input("sdist " + archive + ": member '" + printable(member) + "' " + why +
                 "; archbuild refuses the whole sdist");
}

// A member's data, read by whoever visits it; what is left unread is skipped.
class MemberData {
 public:
  virtual ~MemberData() = default;
  virtual size_t read(void* out, size_t length) = 0;  // 0 at the end
};
using MemberVisitor = std::function<void(size_t index, const ArchiveMember& member, MemberData& data)>;

// ---- tar (gzip-compressed or not: zlib's gzread reads both) ----

class TarStream {
 public:
  TarStream(const std::filesystem::path& path, std::string name, const SdistLimits& limits)
      : name_(std::move(name)), limits_(limits) {
    gz_ = gzopen(path.c_str(), "rb");
    if (!gz_) refuse_archive(name_, "cannot be opened");
    gzbuffer(gz_, 1 << 17);
  }
  ~TarStream() { gzclose(gz_); }
  TarStream(const TarStream&) = delete;
  TarStream& operator=(const TarStream&) = delete;

  // Up to `length` bytes; fewer only where the stream ends.
  size_t read_some(void* out, size_t length) {
    size_t got = 0;
    while (got < length) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(length - got, 1u << 30));
      int n = gzread(gz_, static_cast<char*>(out) + got, chunk);
      int error = Z_OK;
      const char* message = gzerror(gz_, &error);
      if (n < 0 || (error != Z_OK && error != Z_STREAM_END))
        refuse_archive(name_, std::string("is corrupt (") + (message ? message : "gzip error") + ")");
      if (n == 0) break;
      got += static_cast<size_t>(n);
      total_ += static_cast<uint64_t>(n);
      if (total_ > limits_.max_unpacked_bytes)
        refuse_archive(name_, "unpacks to more than " + byte_count(limits_.max_unpacked_bytes));
    }
    return got;
  }
  void read_exact(void* out, size_t length) {
    if (read_some(out, length) != length) refuse_archive(name_, "ends in the middle of a member");
  }
  void skip(uint64_t length) {
    char scratch[1 << 16];
    while (length > 0) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(length, sizeof scratch));
      read_exact(scratch, chunk);
      length -= chunk;
    }
  }
  const std::string& name() const { return name_; }

 private:
  gzFile gz_ = nullptr;
  std::string name_;
  const SdistLimits& limits_;
  uint64_t total_ = 0;
};

class TarData : public MemberData {
 public:
  TarData(TarStream& stream, uint64_t size) : stream_(stream), remaining_(size) {}
  size_t read(void* out, size_t length) override {
    size_t wanted = static_cast<size_t>(std::min<uint64_t>(length, remaining_));
    stream_.read_exact(out, wanted);
    remaining_ -= wanted;
    return wanted;
  }
  uint64_t remaining() const { return remaining_; }

 private:
  TarStream& stream_;
  uint64_t remaining_;
};

std::string header_text(const char* field, size_t length) { return std::string(field, strnlen(field, length)); }

// An octal field, or GNU's base-256 one (first byte's high bit set) for large sizes.
std::optional<uint64_t> header_number(const char* field, size_t length) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(field);
  if (bytes[0] & 0x80) {
    if (bytes[0] == 0xff) return std::nullopt;  // negative
    uint64_t value = bytes[0] & 0x7f;
    for (size_t i = 1; i < length; ++i) {
      if (value >> 56) return std::nullopt;
      value = (value << 8) | bytes[i];
    }
    return value;
  }
  size_t i = 0;
  while (i < length && bytes[i] == ' ') ++i;
  uint64_t value = 0;
  bool digits = false;
  for (; i < length && bytes[i] >= '0' && bytes[i] <= '7'; ++i) {
    if (value >> 60) return std::nullopt;
    value = value * 8 + (bytes[i] - '0');
    digits = true;
  }
  for (; i < length; ++i)
    if (bytes[i] != ' ' && bytes[i] != '\0') return std::nullopt;
  if (!digits) return std::nullopt;
  return value;
}

bool header_checksum_matches(const char* block) {
  auto stored = header_number(block + 148, 8);
  if (!stored) return false;
  uint64_t unsigned_sum = 0;
  int64_t signed_sum = 0;  // some old tars summed signed chars
  for (int i = 0; i < 512; ++i) {
    char c = (i >= 148 && i < 156) ? ' ' : block[i];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return *stored == unsigned_sum || static_cast<int64_t>(*stored) == signed_sum;
}

// "LEN KEY=VALUE\n" records (POSIX pax extended headers).
std::map<std::string, std::string> pax_records(const std::string& data, const std::string& archive) {
  std::map<std::string, std::string> records;
  size_t position = 0;
  while (position < data.size()) {
    if (data[position] == '\0') break;  // padding some writers leave
    size_t space = data.find(' ', position);
    if (space == std::string::npos || space == position) refuse_archive(archive, "has a malformed pax header");
    size_t length = 0;
    for (size_t i = position; i < space; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(data[i])) || length > data.size())
        refuse_archive(archive, "has a malformed pax header");
      length = length * 10 + static_cast<size_t>(data[i] - '0');
    }
    if (length <= space - position || position + length > data.size() || data[position + length - 1] != '\n')
      refuse_archive(archive, "has a malformed pax header");
    std::string record = data.substr(space + 1, position + length - space - 2);
    size_t equals = record.find('=');
    if (equals == std::string::npos) refuse_archive(archive, "has a malformed pax header");
    records[record.substr(0, equals)] = record.substr(equals + 1);
    position += length;
  }
  return records;
}

void visit_tar(const std::filesystem::path& path, const std::string& archive, const SdistLimits& limits,
               const MemberVisitor& visit) {
  TarStream stream(path, archive, limits);
  std::map<std::string, std::string> pax;
  std::optional<std::string> long_name, long_link;
  size_t index = 0;
  auto read_extension = [&](uint64_t size) {
    if (size > kMaxHeaderExtensionBytes)
      refuse_archive(archive, "has a header extension of " + byte_count(size) + " (at most " +
                                  byte_count(kMaxHeaderExtensionBytes) + ")");
    std::string data(static_cast<size_t>(size), '\0');
    stream.read_exact(data.data(), data.size());
    stream.skip((512 - size % 512) % 512);
    return data;
  };
  while (true) {
    char block[512];
    size_t got = stream.read_some(block, sizeof block);
    if (got == 0) break;  // no end-of-archive blocks: tolerated
    if (got != sizeof block) refuse_archive(archive, "ends in the middle of a header");
    if (std::all_of(block, block + sizeof block, [](char c) { return c == '\0'; })) break;
    if (!header_checksum_matches(block))
      refuse_archive(archive,
                     "is not a tar archive (a header's checksum is wrong after " + std::to_string(index) + " members)");
    auto size_field = header_number(block + 124, 12);
    if (!size_field) refuse_archive(archive, "has a header with an unreadable size");
    uint64_t size = *size_field;
    const char type = block[156];
    if (type == 'x' || type == 'g') {
      auto records = pax_records(read_extension(size), archive);
      if (type == 'x') pax = std::move(records);  // global ones ('g') set nothing archbuild reads
      continue;
    }
    if (type == 'L' || type == 'K') {
      auto text = read_extension(size);
      text.resize(strnlen(text.data(), text.size()));
      (type == 'L' ? long_name : long_link) = text;
      continue;
    }
    ArchiveMember member;
    member.name = header_text(block, 100);
    const bool posix_ustar = std::memcmp(block + 257, "ustar\0", 6) == 0;
    if (posix_ustar) {
      std::string prefix = header_text(block + 345, 155);
      if (!prefix.empty()) member.name = prefix + "/" + member.name;
    }
    member.link_target = header_text(block + 157, 100);
    if (long_name) member.name = *long_name;
    if (long_link) member.link_target = *long_link;
    if (auto it = pax.find("path"); it != pax.end()) member.name = it->second;
    if (auto it = pax.find("linkpath"); it != pax.end()) member.link_target = it->second;
    if (auto it = pax.find("size"); it != pax.end()) {
      const std::string& text = it->second;
      if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
        refuse_archive(archive, "has a pax header with an unreadable size");
      size = std::stoull(text);
    }
    pax.clear();
    long_name.reset();
    long_link.reset();
    auto mode = header_number(block + 100, 8);
    member.executable = mode && (*mode & 0111);
    switch (type) {
      case '0':
      case '\0':
      case '7': member.kind = member.name.ends_with("/") ? MemberKind::directory : MemberKind::file; break;
      case '1': member.kind = MemberKind::hardlink; break;
      case '2': member.kind = MemberKind::symlink; break;
      case '5': member.kind = MemberKind::directory; break;
      case '3': member.kind = MemberKind::unsupported, member.type = "character device"; break;
      case '4': member.kind = MemberKind::unsupported, member.type = "block device"; break;
      case '6': member.kind = MemberKind::unsupported, member.type = "fifo"; break;
      default:
        member.kind = MemberKind::unsupported;
        member.type = std::string("tar member of type '") + printable(std::string(1, type)) + "'";
    }
    if (index >= limits.max_members)
      refuse_archive(archive, "has more than " + std::to_string(limits.max_members) + " members");
    if (member.kind == MemberKind::file) {
      member.size = size;
      if (size > limits.max_member_bytes)
        refuse_member(archive, member.name,
                      "is " + byte_count(size) + " (at most " + byte_count(limits.max_member_bytes) + " per file)");
    }
    TarData data(stream, member.kind == MemberKind::file ? size : 0);
    visit(index++, member, data);
    // What the visitor left, the data of other kinds (a hardlink may carry some), and the padding.
    uint64_t rest = member.kind == MemberKind::file ? data.remaining() : size;
    stream.skip(rest);
    stream.skip((512 - size % 512) % 512);
  }
}

// ---- zip ----

class ZipData : public MemberData {
 public:
  ZipData(zip_t* archive, int64_t index) : archive_(archive), index_(index) {}
  size_t read(void* out, size_t length) override {
    if (!stream_) stream_ = std::make_unique<ZipMemberStream>(archive_, index_);
    return stream_->read(out, length);
  }

 private:
  zip_t* archive_;
  int64_t index_;
  std::unique_ptr<ZipMemberStream> stream_;  // opened when read: a listing decompresses nothing
};

void visit_zip(const std::filesystem::path& path, const std::string& archive, const SdistLimits& limits,
               const MemberVisitor& visit) {
  int error = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> zip(zip_open(path.c_str(), ZIP_RDONLY, &error), zip_discard);
  if (!zip) refuse_archive(archive, "is not a readable zip archive");
  zip_int64_t count = zip_get_num_entries(zip.get(), 0);
  if (count < 0 || static_cast<uint64_t>(count) > limits.max_members)
    refuse_archive(archive, "has more than " + std::to_string(limits.max_members) + " members");
  uint64_t declared = 0;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t info;
    zip_stat_init(&info);
    if (zip_stat_index(zip.get(), i, 0, &info) != 0 || !info.name || !(info.valid & ZIP_STAT_SIZE))
      refuse_archive(archive, "has an unreadable entry (#" + std::to_string(i) + ")");
    ArchiveMember member;
    member.name = info.name;
    zip_uint8_t system = 0;
    zip_uint32_t attributes = 0;
    zip_file_get_external_attributes(zip.get(), i, 0, &system, &attributes);
    const uint32_t mode = system == ZIP_OPSYS_UNIX ? attributes >> 16 : 0;
    member.executable = mode & 0111;
    switch (mode & S_IFMT) {
      case S_IFLNK: member.kind = MemberKind::symlink; break;
      case S_IFDIR: member.kind = MemberKind::directory; break;
      case 0:
      case S_IFREG: member.kind = MemberKind::file; break;
      case S_IFCHR: member.kind = MemberKind::unsupported, member.type = "character device"; break;
      case S_IFBLK: member.kind = MemberKind::unsupported, member.type = "block device"; break;
      case S_IFIFO: member.kind = MemberKind::unsupported, member.type = "fifo"; break;
      default: member.kind = MemberKind::unsupported, member.type = "socket or unknown file type";
    }
    if (member.name.ends_with("/") && member.kind == MemberKind::file) member.kind = MemberKind::directory;
    try {
      if (member.kind == MemberKind::symlink) {
        member.link_target = read_zip_member(zip.get(), i, member.name, kMaxSymlinkTargetBytes);
      } else if (member.kind == MemberKind::file) {
        member.size = info.size;
        if (info.size > limits.max_member_bytes)
          refuse_member(archive, member.name,
                        "is " + byte_count(info.size) + " (at most " + byte_count(limits.max_member_bytes) +
                            " per file)");
        declared += info.size;
        if (declared > limits.max_unpacked_bytes)
          refuse_archive(archive, "unpacks to more than " + byte_count(limits.max_unpacked_bytes));
      }
      ZipData data(zip.get(), i);
      visit(static_cast<size_t>(i), member, data);
    } catch (const ZipMemberError& e) {
      refuse_member(archive, member.name, e.problem());
    }
  }
}

void visit_sdist(const std::filesystem::path& path, const SdistLimits& limits, const MemberVisitor& visit) {
  std::string archive = path.filename().string();
  if (!is_sdist_file_name(archive))
    refuse_archive(archive, "is not a .tar.gz, .tgz, .tar or .zip file (the sdist formats archbuild reads)");
  if (archive.ends_with(".zip"))
    visit_zip(path, archive, limits, visit);
  else
    visit_tar(path, archive, limits, visit);
}

// "./a/b/" -> "a/b" for a directory; a file keeps a trailing '/' (and is refused for it).
std::string normalised_name(std::string name, MemberKind kind) {
  while (name.starts_with("./")) name.erase(0, 2);
  if (kind == MemberKind::directory)
    while (!name.empty() && name.back() == '/') name.pop_back();
  return name;
}

std::string name_problem(const std::string& path) {
  if (path.find('\\') != std::string::npos) return "holds a backslash";
  if (std::any_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    return "holds a control character";
  std::string problem = relative_path_problem(path);
  if (!problem.empty()) return problem;
  if (path.size() > kMaxPathBytes) return "is longer than " + std::to_string(kMaxPathBytes) + " bytes";
  for (const auto& part : split_any(path, "/"))
    if (part.size() > kMaxComponentBytes)
      return "has a component longer than " + std::to_string(kMaxComponentBytes) + " bytes";
  return "";
}

struct Node {
  MemberKind kind;
  size_t member;
};

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The paths an sdist's members take, each checked, with the member each
// holds the data of; first by archive path, then by path in the tree.
struct SdistPaths {
  std::map<std::string, Node> nodes;
  std::vector<std::pair<std::string, size_t>> order;  // (path, member) of what the tree holds, in archive order
};

// A path with each VCS metadata component renamed (separators kept: a
// leading '/' stays absolute), and the topmost path under VCS metadata; ""
// when it has none.
struct SdistVcsMetadata {
  std::string renamed;
  std::string top;
};

SdistVcsMetadata sdist_vcs_metadata_of(const std::string& path) {
  SdistVcsMetadata found;
  for (size_t start = 0; start <= path.size();) {
    const size_t slash = std::min(path.find('/', start), path.size());
    const std::string part = path.substr(start, slash - start);
    if (is_vcs_metadata_name(part)) {
      if (found.top.empty()) found.top = path.substr(0, slash);
      found.renamed += "vcs-metadata";
    } else {
      found.renamed += part;
    }
    if (slash < path.size()) found.renamed += '/';
    start = slash + 1;
  }
  return found;
}

// The node of a member at a path not seen before: a hardlink's data is that of the earlier file it names.
Node sdist_node_of(const SdistPaths& paths, const ArchiveMember& member, size_t index, const std::string& archive) {
  Node node{member.kind, index};
  if (member.kind != MemberKind::hardlink) return node;
  std::string target = normalised_name(member.link_target, MemberKind::file);
  auto it = paths.nodes.find(target);
  if (it == paths.nodes.end() || it->second.kind != MemberKind::file)
    refuse_member(archive, member.name,
                  "is a hardlink to '" + printable(member.link_target) +
                      "', which is not an earlier file of the archive");
  node.member = it->second.member;
  return node;
}

// Checks member `index` and adds its path, unless it is the archive's root,
// a directory seen before, or VCS metadata (named in `dropped`).
void add_sdist_member(SdistPaths& paths, const std::vector<ArchiveMember>& members, size_t index,
                      const std::string& archive, std::vector<std::string>* dropped) {
  const auto& member = members[index];
  if (member.kind == MemberKind::unsupported)
    refuse_member(archive, member.name, "is a " + member.type + "; an sdist holds files, directories and symlinks");
  std::string path = normalised_name(member.name, member.kind);
  if (member.kind == MemberKind::directory && (path.empty() || path == ".")) return;  // the archive's root
  // VCS metadata (a submodule's .git file in a vendored directory) is left
  // out once it passes every other check: read as if renamed, it must still
  // be a safe name.
  if (const auto metadata = sdist_vcs_metadata_of(path); !metadata.top.empty()) {
    std::string problem = name_problem(metadata.renamed);
    if (!problem.empty()) refuse_member(archive, member.name, problem);
    if (dropped && std::find(dropped->begin(), dropped->end(), metadata.top) == dropped->end())
      dropped->push_back(metadata.top);
    return;
  }
  std::string problem = name_problem(path);
  if (!problem.empty()) refuse_member(archive, member.name, problem);
  if (auto it = paths.nodes.find(path); it != paths.nodes.end()) {
    if (it->second.kind == MemberKind::directory && member.kind == MemberKind::directory) return;
    refuse_member(archive, member.name, "appears twice in the archive");
  }
  paths.nodes[path] = sdist_node_of(paths, member, index, archive);
  paths.order.emplace_back(path, index);
}

// Every member by its normalised archive path, checked one by one.
SdistPaths sdist_archive_paths(const std::vector<ArchiveMember>& members, const std::string& archive,
                               std::vector<std::string>* dropped) {
  SdistPaths paths;
  for (size_t i = 0; i < members.size(); ++i) add_sdist_member(paths, members, i, archive, dropped);
  return paths;
}

// NAME-VERSION, as sdist builders name their top directory: a hyphen, then a version that starts with a digit.
bool is_sdist_name_version(const std::string& dir) {
  const auto hyphen = dir.rfind('-');
  return hyphen != std::string::npos && hyphen > 0 && hyphen + 1 < dir.size() &&
         std::isdigit(static_cast<unsigned char>(dir[hyphen + 1]));
}

// The single top-level directory to strip: the sdist's own NAME-VERSION/
// with everything under it; a flat sdist whose only top-level entry is its
// package (mypkg/) keeps it.
std::optional<std::string> sdist_top_to_strip(const SdistPaths& paths) {
  std::string top;
  bool strip = !paths.order.empty();
  bool deeper = false;
  for (const auto& [path, index] : paths.order) {
    std::string first = path.substr(0, path.find('/'));
    if (top.empty()) top = first;
    strip = strip && first == top;
    deeper = deeper || path.size() > first.size();
  }
  if (auto it = paths.nodes.find(top); it != paths.nodes.end() && it->second.kind != MemberKind::directory)
    strip = false;
  if (!(strip && deeper && is_sdist_name_version(top))) return std::nullopt;
  return top;
}

// pip strips any single top directory; one that names another project than
// the sdist's file (foo-1.0.tar.gz holding bar-9.9/) is a mislabelled or
// substituted sdist, refused rather than built under the wrong name.
void check_sdist_top_names_its_project(const std::string& top, const std::string& archive) {
  std::string archive_stem = archive;
  for (const char* suffix : {".tar.gz", ".tgz", ".tar", ".zip"})
    if (archive_stem.ends_with(suffix)) archive_stem.resize(archive_stem.size() - std::string_view(suffix).size());
  if (!is_sdist_name_version(archive_stem)) return;
  const auto name_of = [](const std::string& name_version) {
    return normalize_project_name(name_version.substr(0, name_version.rfind('-')));
  };
  if (name_of(top) != name_of(archive_stem))
    refuse_member(archive, top + "/",
                  "is the sdist's single top-level directory, and it names the project " + printable(name_of(top)) +
                      ", not " + name_of(archive_stem));
}

// The archive's paths as the tree holds them: without `top` when one is stripped.
SdistPaths sdist_paths_in_tree(const SdistPaths& archive_paths, const std::optional<std::string>& top) {
  SdistPaths tree;
  for (const auto& [path, index] : archive_paths.order) {
    if (top && path == *top) continue;
    std::string in_tree = top ? path.substr(top->size() + 1) : path;
    tree.nodes[in_tree] = archive_paths.nodes.at(path);
    tree.order.emplace_back(in_tree, index);
  }
  return tree;
}

// "a file" or "a symlink" when the tree holds one at `path`; nullptr for a directory or nothing.
const char* sdist_file_or_symlink_at(const SdistPaths& tree, const std::string& path) {
  auto it = tree.nodes.find(path);
  if (it == tree.nodes.end() || it->second.kind == MemberKind::directory) return nullptr;
  return it->second.kind == MemberKind::symlink ? "a symlink" : "a file";
}

void check_sdist_not_inside_a_file(const SdistPaths& tree, const std::string& path, const ArchiveMember& member,
                                   const std::string& archive) {
  for (std::string above = parent_of(path); !above.empty(); above = parent_of(above))
    if (const char* what = sdist_file_or_symlink_at(tree, above))
      refuse_member(archive, member.name,
                    std::string("lies inside '") + printable(above) + "', which is " + what + " in the archive");
}

// A symlink's target, read on its own: relative, inside the tree, no NUL, no longer than a symlink holds.
void check_sdist_symlink_target(const std::string& path, const ArchiveMember& member, const std::string& archive) {
  std::string problem = symlink_target_problem(path, member.link_target);
  if (problem.empty() && member.link_target.find('\0') != std::string::npos) problem = "holds a NUL byte";
  if (problem.empty() && member.link_target.size() >= kMaxSymlinkTargetBytes)
    problem = "is " + byte_count(member.link_target.size()) + " long; a symlink holds at most " +
              byte_count(kMaxSymlinkTargetBytes - 1);
  if (!problem.empty())
    refuse_member(archive, member.name, "is a symlink whose target '" + printable(member.link_target) + "' " + problem);
}

// Read lexically, a target is where it leads only if no component on the
// way is another symlink (a/link/.. is not a when link leads elsewhere);
// and none of it is .git.
void check_sdist_symlink_walk(const SdistPaths& tree, const std::string& path, const ArchiveMember& member,
                              const std::string& archive) {
  std::vector<std::string> walked = split_any(parent_of(path), "/");
  auto parts = split_any(member.link_target, "/");
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k] == ".") continue;
    if (parts[k] == "..") {
      if (!walked.empty()) walked.pop_back();
      continue;
    }
    walked.push_back(parts[k]);
    if (to_lower(parts[k]) == ".git")
      refuse_member(archive, member.name,
                    "is a symlink whose target '" + printable(member.link_target) + "' goes into .git");
    std::string so_far = join(walked, "/");
    auto it = tree.nodes.find(so_far);
    if (k + 1 < parts.size() && it != tree.nodes.end() && it->second.kind == MemberKind::symlink)
      refuse_member(archive, member.name,
                    "is a symlink whose target '" + printable(member.link_target) + "' passes through the symlink '" +
                        printable(so_far) + "'");
  }
}

// The tree's files and symlinks, each checked where it lies; git holds no directories of their own.
std::vector<SdistTreeEntry> sdist_tree_entries(const SdistPaths& tree, const std::vector<ArchiveMember>& members,
                                               const std::string& archive) {
  std::vector<SdistTreeEntry> entries;
  for (const auto& [path, index] : tree.order) {
    const auto& member = members[index];
    check_sdist_not_inside_a_file(tree, path, member, archive);
    if (member.kind == MemberKind::directory) continue;
    SdistTreeEntry entry;
    entry.path = path;
    entry.member = tree.nodes.at(path).member;
    entry.executable = member.executable;
    if (member.kind == MemberKind::symlink) {
      entry.symlink = true;
      entry.link_target = member.link_target;
      check_sdist_symlink_target(path, member, archive);
      check_sdist_symlink_walk(tree, path, member, archive);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace

bool is_sdist_file_name(const std::string& name) {
  return name.ends_with(".tar.gz") || name.ends_with(".tgz") || name.ends_with(".tar") || name.ends_with(".zip");
}

std::vector<ArchiveMember> list_sdist_members(const std::filesystem::path& archive, const SdistLimits& limits) {
  std::vector<ArchiveMember> members;
  visit_sdist(archive, limits, [&](size_t, const ArchiveMember& member, MemberData&) { members.push_back(member); });
  return members;
}

std::vector<SdistTreeEntry> sdist_tree(const std::vector<ArchiveMember>& members, const std::string& archive,
                                       std::vector<std::string>* dropped) {
  const SdistPaths archive_paths = sdist_archive_paths(members, archive, dropped);
  const auto top = sdist_top_to_strip(archive_paths);
  if (top) check_sdist_top_names_its_project(*top, archive);
  auto entries = sdist_tree_entries(sdist_paths_in_tree(archive_paths, top), members, archive);
  if (entries.empty()) refuse_archive(archive, "holds no files");
  return entries;
}

git_oid write_sdist_tree(git_repository* repo, const std::filesystem::path& archive,
                         const std::vector<ArchiveMember>& members, const std::vector<SdistTreeEntry>& tree,
                         const SdistLimits& limits) {
  const std::string name = archive.filename().string();
  std::set<size_t> wanted;
  for (const auto& entry : tree)
    if (!entry.symlink) wanted.insert(entry.member);
  std::map<size_t, git_oid> blobs;
  size_t seen = 0;
  visit_sdist(archive, limits, [&](size_t index, const ArchiveMember& member, MemberData& data) {
    seen = index + 1;
    const bool same = index < members.size() && members[index].name == member.name &&
                      members[index].kind == member.kind && members[index].size == member.size &&
                      members[index].link_target == member.link_target;
    if (!same) refuse_archive(name, "changed while archbuild read it");
    if (!wanted.count(index)) return;
    git_writestream* raw = nullptr;
    git_check(git_blob_create_from_stream(&raw, repo, nullptr), "cannot store " + member.name);
    auto stream = std::unique_ptr<git_writestream, void (*)(git_writestream*)>(raw,
                                                                               [](git_writestream* s) { s->free(s); });
    char buffer[1 << 16];
    while (size_t got = data.read(buffer, sizeof buffer))
      git_check(stream->write(stream.get(), buffer, got), "cannot store " + member.name);
    git_oid oid;
    git_check(git_blob_create_from_stream_commit(&oid, stream.release()), "cannot store " + member.name);
    blobs[index] = oid;
  });
  if (seen != members.size()) refuse_archive(name, "changed while archbuild read it");

  git_index* raw_index = nullptr;
  git_check(git_index_new(&raw_index), "cannot make an index");
  GitIndex index(raw_index);
  for (const auto& entry : tree) {
    git_index_entry item{};
    item.path = entry.path.c_str();
    if (entry.symlink) {
      item.mode = GIT_FILEMODE_LINK;
      git_check(git_blob_create_from_buffer(&item.id, repo, entry.link_target.data(), entry.link_target.size()),
                "cannot store the symlink " + entry.path);
      item.file_size = static_cast<uint32_t>(entry.link_target.size());
    } else {
      item.mode = entry.executable ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
      item.id = blobs.at(entry.member);
      item.file_size = static_cast<uint32_t>(std::min<uint64_t>(members[entry.member].size, UINT32_MAX));
    }
    git_check(git_index_add(index.get(), &item), "cannot add " + entry.path + " to the tree of " + name);
  }
  git_oid tree_id;
  git_check(git_index_write_tree_to(&tree_id, index.get(), repo), "cannot write the tree of " + name);
  return tree_id;
}

}  // namespace archbuild
