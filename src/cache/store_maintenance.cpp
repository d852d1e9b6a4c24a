#include "cache/store_maintenance.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include <openssl/evp.h>

#include "cache/simple_index.h"
#include "core/error.h"
#include "core/sha256.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {

// Index pages archbuild writes are a few hundred bytes per wheel.
constexpr uint64_t kMaxPageBytes = 16ull << 20;
constexpr uint64_t kMaxKeyBytes = 1ull << 20;
// Problems reported per page before the rest are only counted.
constexpr size_t kMaxPageProblems = 20;

// An open descriptor, closed on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens `path` for reading only when it is a regular file: O_NONBLOCK so a
// FIFO does not block the open, fstat on the descriptor so what is checked is
// what is read. Returns the reason it may not be read, or "".
std::string open_regular(const std::filesystem::path& path, Fd& file) {
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file.fd < 0) return std::string("cannot be opened: ") + std::strerror(errno);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return std::string("cannot be examined: ") + std::strerror(errno);
  if (!S_ISREG(info.st_mode))
    return S_ISFIFO(info.st_mode)  ? "is a FIFO, not a regular file"
           : S_ISCHR(info.st_mode) ? "is a character device, not a regular file"
           : S_ISDIR(info.st_mode) ? "is a directory, not a regular file"
                                   : "is not a regular file";
  return {};
}

// The whole file when it is a regular file of at most `cap` bytes; else the problem.
std::string read_regular(const std::filesystem::path& path, uint64_t cap, std::string& content) {
  Fd file;
  if (auto why = open_regular(path, file); !why.empty()) return why;
  content.clear();
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(file.fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::string("cannot be read: ") + std::strerror(errno);
    if (got == 0) return {};
    if (content.size() + static_cast<uint64_t>(got) > cap)
      return "is larger than " + std::to_string(cap >> 20) + " MiB, more than archbuild ever writes there";
    content.append(buffer, static_cast<size_t>(got));
  }
}

// sha256 of a regular file, or the reason it was not read.
std::string hash_regular(const std::filesystem::path& path, std::string& hex) {
  Fd file;
  if (auto why = open_regular(path, file); !why.empty()) return why;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(file.fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::string("cannot be read: ") + std::strerror(errno);
    if (got == 0) break;
    EVP_DigestUpdate(context.get(), buffer, static_cast<size_t>(got));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  static const char* digits = "0123456789abcdef";
  hex.clear();
  for (unsigned i = 0; i < length; ++i) (hex += digits[digest[i] >> 4]) += digits[digest[i] & 15];
  return {};
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A long or binary value shortened for a message.
std::string shown(std::string_view text) {
  constexpr size_t kShown = 80;
  std::string out;
  for (char c : text.substr(0, kShown)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (text.size() > kShown) out += "... (" + std::to_string(text.size()) + " characters)";
  return out;
}

}  // namespace

std::vector<std::string> verify_store_entry(const StoreEntry& entry) {
  std::vector<std::string> problems;
  std::string key_text;
  if (auto why = read_regular(entry.dir / "key.txt", kMaxKeyBytes, key_text); !why.empty())
    problems.push_back("key.txt " + why);
  else if (sha256_hex(key_text) != entry.hash)
    problems.push_back("key.txt does not hash to the entry's name (edited?)");
  if (!entry.manifest) {
    problems.push_back("manifest.json is missing or not JSON");
    return problems;
  }
  if (entry.wheels.empty()) problems.push_back("no wheel in wheels/");
  std::map<std::string, std::string> recorded;
  for (const auto& wheel : entry.manifest->wheels) recorded[wheel.file] = wheel.sha256;
  for (const auto& wheel : entry.wheels) {
    auto name = wheel.filename().string();
    std::string digest;
    if (auto why = hash_regular(wheel, digest); !why.empty()) {
      problems.push_back(name + " " + why);
      continue;
    }
    auto it = recorded.find(name);
    if (it == recorded.end()) {
      problems.push_back(name + ": not listed in manifest.json");
    } else if (digest != it->second) {
      problems.push_back(name + ": sha256 differs from the manifest's (changed after publishing)");
    }
    try {
      for (const auto& error : verify_record(wheel).errors) problems.push_back(name + ": " + error);
    } catch (const UserError& e) {
      problems.push_back(name + ": " + e.what());
    }
  }
  for (const auto& [name, hash] : recorded)
    if (!std::filesystem::exists(entry.dir / "wheels" / name))
      problems.push_back(name + ": in manifest.json but missing");
  return problems;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (text.size() - i < 3) return std::nullopt;
    int high = hex_value(text[i + 1]), low = hex_value(text[i + 2]);
    if (high < 0 || low < 0 || (high == 0 && low == 0)) return std::nullopt;  // no file name holds a NUL
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

std::vector<IndexLink> index_page_links(std::string_view page) {
  std::vector<IndexLink> links;
  constexpr std::string_view kHref = "href=\"";
  size_t at = 0;
  while ((at = page.find(kHref, at)) != std::string_view::npos) {
    at += kHref.size();
    size_t end = page.find('"', at);
    if (end == std::string_view::npos) break;
    auto value = page.substr(at, end - at);
    at = end + 1;
    auto hash = value.find('#');
    if (hash == std::string_view::npos) continue;  // not a wheel link
    auto fragment = value.substr(hash + 1);
    if (!fragment.starts_with("sha256=")) continue;
    links.push_back({std::string(value.substr(0, hash)), std::string(fragment.substr(7))});
  }
  return links;
}

std::vector<std::string> verify_cache_index(const std::filesystem::path& cache_dir, const WheelStore& store) {
  std::vector<std::string> problems;
  auto index = cache_index_paths(cache_dir);
  std::set<std::string> published, listed;
  for (const auto& entry : store.entries())
    for (const auto& wheel : entry.wheels) published.insert(wheel.filename().string());
  auto root = cache_dir.lexically_normal();
  if (!root.has_filename()) root = root.parent_path();  // "cache/"
  std::map<std::filesystem::path, std::string> hashed;  // a page naming one wheel many times hashes it once
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator(index.simple_dir, ec)) {
    if (!dir.is_directory(ec)) continue;
    auto page_name = "simple/" + dir.path().filename().string() + "/index.html";
    std::vector<std::string> found;
    size_t more = 0;
    auto problem = [&](const std::string& text) {  // text goes on from the page's name
      if (found.size() < kMaxPageProblems)
        found.push_back(page_name + text);
      else
        ++more;
    };
    std::string body;
    if (auto why = read_regular(dir.path() / "index.html", kMaxPageBytes, body); !why.empty()) {
      problems.push_back(page_name + " " + why);
      continue;
    }
    for (const auto& link : index_page_links(body)) {
      bool hex = link.sha256.size() == 64 && std::all_of(link.sha256.begin(), link.sha256.end(), [](char c) {
                   return hex_value(c) >= 0 && !std::isupper(static_cast<unsigned char>(c));
                 });
      if (!hex) {
        problem("a link's sha256 is not 64 hex digits: " + shown(link.sha256));
        continue;
      }
      auto decoded = percent_decode(link.href);
      if (!decoded || decoded->empty()) {
        problem(": malformed percent-escape in the link " + shown(link.href));
        continue;
      }
      if (decoded->front() == '/' || decoded->find("://") != std::string::npos) {
        problem(": the link " + shown(link.href) + " is not relative (archbuild links wheels in the cache)");
        continue;
      }
      auto target = (dir.path() / *decoded).lexically_normal();
      auto inside = target.lexically_relative(root);
      if (inside.empty() || *inside.begin() == "..") {
        problem(": the link " + shown(link.href) + " points outside the cache");
        continue;
      }
      listed.insert(target.filename().string());
      if (!std::filesystem::exists(target, ec)) {
        problem(" links a missing wheel: " + shown(target.string()));
        continue;
      }
      auto known = hashed.find(target);
      std::string why;
      if (known == hashed.end()) {
        std::string hex_digest;
        why = hash_regular(target, hex_digest);
        known = hashed.emplace(target, why.empty() ? hex_digest : "").first;
      }
      if (!why.empty() || known->second.empty())
        problem(" links " + shown(target.string()) + ", which " + (why.empty() ? "cannot be read" : why));
      else if (known->second != link.sha256)
        problem(": sha256 of " + target.filename().string() + " differs from the link's");
    }
    problems.insert(problems.end(), found.begin(), found.end());
    if (more) problems.push_back(page_name + ": " + std::to_string(more) + " more problems");
  }
  for (const auto& name : published)
    if (!listed.count(name))
      problems.push_back(name + ": published but not in the index (run `archbuild cache gc` to rebuild it)");
  return problems;
}

std::string gc_group(const StoreEntry& entry) {
  std::set<std::string> projects;
  for (const auto& wheel : entry.wheels)
    if (auto name = WheelName::parse(wheel.filename().string())) projects.insert(normalize_project_name(name->name));
  std::string group;
  for (const auto& project : projects) group += (group.empty() ? "" : ",") + project;
  return group + " " + entry.value("arch_list");
}

std::vector<StoreEntry> entries_to_collect(const std::vector<StoreEntry>& entries, size_t keep) {
  std::map<std::string, size_t> kept;
  std::vector<StoreEntry> doomed;
  for (const auto& entry : entries)
    if (++kept[gc_group(entry)] > keep) doomed.push_back(entry);
  return doomed;
}

}  // namespace archbuild
