#include "core/secrets.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "core/cache_layout.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/strings.h"

namespace archbuild::secrets {

namespace {

constexpr size_t kShortestRemembered = 4;
constexpr size_t kSecretBytes = 32;

std::string to_hex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

std::string random_hex() {
  unsigned char bytes[kSecretBytes];
  if (RAND_bytes(bytes, sizeof bytes) != 1) fail_environment("cannot draw random bytes for the cache's secret");
  return to_hex(bytes, sizeof bytes);
}

struct State {
  std::mutex mutex;
  std::set<std::string> marked_names;  // upper case
  // Longest first, so that a value inside another is replaced after it.
  std::set<std::string, bool (*)(const std::string&, const std::string&)> values{
      [](const std::string& a, const std::string& b) { return a.size() != b.size() ? a.size() > b.size() : a < b; }};
  std::string digest_key = random_hex();
};

State& state() {
  static State* instance = new State;  // never destroyed: logged to while statics go away
  return *instance;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool ends_token(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`';
}

// The userinfo spans ([begin, end) before the '@') of the URLs in `text`.
// Strictly a password holds no '/', '?', '#' or '@' unencoded, but people
// write them (AWS-style secrets hold '/'): where the host part holds a ':'
// ("user:password", or a port), the userinfo runs to the last '@' of the
// word. That reads "https://host:8080/repo@v1" as userinfo too: shown with
// less than it could, never with a password.
std::vector<std::pair<size_t, size_t>> userinfo_spans(std::string_view text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t scheme = text.find("://"); scheme != std::string_view::npos; scheme = text.find("://", scheme + 3)) {
    const size_t host = scheme + 3;
    size_t word_end = host;
    while (word_end < text.size() && !ends_token(text[word_end])) ++word_end;
    const auto word = text.substr(host, word_end - host);
    const auto segment = word.substr(0, std::min(word.find_first_of("/?#"), word.size()));
    size_t at = std::string_view::npos;
    if (segment.find(':') != std::string_view::npos)
      at = word.rfind('@');
    else
      at = segment.rfind('@');
    if (at != std::string_view::npos) spans.emplace_back(host, host + at);
  }
  return spans;
}

// `text` with each userinfo replaced by `with(userinfo)`.
template <typename Replace>
std::string replace_userinfo(std::string_view text, Replace with) {
  std::string out;
  size_t done = 0;
  for (auto [begin, end] : userinfo_spans(text)) {
    if (begin < done) continue;
    out.append(text.substr(done, begin - done));
    out += with(text.substr(begin, end - begin));
    done = end;
  }
  out.append(text.substr(done));
  return out;
}

// `text` with each remembered value replaced by `with(value)`.
template <typename Replace>
std::string replace_remembered(std::string text, Replace with) {
  std::vector<std::string> values;
  {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    values.assign(s.values.begin(), s.values.end());  // `with` may take the lock
  }
  for (const auto& value : values) {
    for (size_t at = text.find(value); at != std::string::npos; at = text.find(value, at)) {
      const std::string replacement = with(value);
      text.replace(at, value.size(), replacement);
      at += replacement.size();
    }
  }
  return text;
}

void remember_locked(State& s, std::string_view value) {
  if (value.size() >= kShortestRemembered) s.values.insert(std::string(value));
}

}  // namespace

bool is_secret_name(std::string_view name) {
  const std::string name_upper = upper(name);
  for (std::string_view part : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "KEY"})
    if (name_upper.find(part) != std::string::npos) return true;
  for (size_t at = name_upper.find("AUTH"); at != std::string::npos; at = name_upper.find("AUTH", at + 1))
    if (name_upper.compare(at, 6, "AUTHOR") != 0) return true;  // GIT_AUTHOR_NAME is no secret
  auto& s = state();
  std::lock_guard lock(s.mutex);
  return s.marked_names.contains(name_upper);
}

void mark_secret_name(std::string_view name) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.marked_names.insert(upper(name));
}

void remember(std::string_view value) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  remember_locked(s, value);
}

void remember_url_userinfo(std::string_view text) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  for (auto [begin, end] : userinfo_spans(text)) {
    const auto userinfo = text.substr(begin, end - begin);
    remember_locked(s, userinfo);
    const auto colon = userinfo.find(':');
    // A user name alone is a token (https://TOKEN@host); beside a password
    // it is a name, not remembered (it would scrub an ordinary word).
    const auto password = colon == std::string_view::npos ? userinfo : userinfo.substr(colon + 1);
    remember_locked(s, password);
    if (auto decoded = percent_decode(password)) remember_locked(s, *decoded);
  }
}

std::string scrub(std::string_view text) {
  // URLs first (their userinfo as "***", as people know it), then whatever
  // remembered value is left: one in a URL the URL rule could not read (a
  // password holding a space), or anywhere else.
  auto out = replace_userinfo(text, [](std::string_view) { return std::string("***"); });
  return replace_remembered(std::move(out), [](const std::string&) { return std::string("<redacted>"); });
}

void use_cache_secret(const std::filesystem::path& cache_dir, bool make) {
  const auto path = CacheLayout(cache_dir).secret_key();
  auto content = read_own_file(path, 4096);
  if (!content && !make) return;
  if (!content) {
    // Made once, never replaced: link() refuses an existing name, so of two
    // builds starting at once both end up with the first one's secret.
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    const auto staged = cache_dir / (".tmp-secret-" + std::to_string(::getpid()) + "-" + random_hex().substr(0, 8));
    write_file_atomically(staged, random_hex() + "\n", std::filesystem::perms::owner_read);
    const bool linked = ::link(staged.c_str(), path.c_str()) == 0;
    const int error = errno;
    ::unlink(staged.c_str());
    if (!linked && error != EEXIST)
      fail_environment("cannot make the cache's secret " + path.string() + ": " + std::strerror(error));
    content = read_own_file(path, 4096);
    if (!content) fail_environment("the cache's secret " + path.string() + " went away while it was made");
  }
  const auto key = trim(*content);
  if (key.size() < kSecretBytes)
    fail_bad_input(path.string() + " is not a secret archbuild made (too short); remove it to make a new one");
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.digest_key = key;
}

std::string digest(std::string_view value) {
  std::string key;
  {
    auto& s = state();
    std::lock_guard lock(s.mutex);
    key = s.digest_key;
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(value.data()), value.size(), mac, &size))
    fail_environment("cannot compute an HMAC-SHA256");
  return "<secret sha256:" + to_hex(mac, size) + ">";
}

std::string recorded_value(std::string_view name, std::string_view value) {
  if (value.empty()) return "";
  if (is_secret_name(name)) return digest(value);
  auto out = replace_remembered(std::string(value), [](const std::string& secret) { return digest(secret); });
  return replace_userinfo(out, [](std::string_view userinfo) { return digest(userinfo); });
}

std::map<std::string, std::string> recorded_env(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> recorded;
  for (const auto& [name, value] : env) recorded[name] = recorded_value(name, value);
  return recorded;
}

}  // namespace archbuild::secrets
