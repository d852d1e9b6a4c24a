#include "config/settings.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>

#include "config/setting_names.h"
#include "core/cache_dir.h"
#include "core/error.h"
#include "core/log.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "core/user_path.h"
#include "process/run_process.h"

namespace archbuild {

const std::vector<SettingSpec>& setting_specs() {
  static const std::vector<SettingSpec> specs = {
      {setting_name::cache_dir, "ARCHBUILD_CACHE_DIR", "--cache-dir", "mirrors, work trees, builds, ccache"},
      {setting_name::jobs, "ARCHBUILD_JOBS", "--jobs", "parallel compile jobs (default: cores and memory decide)"},
      {setting_name::compiler_launcher, "ARCHBUILD_COMPILER_LAUNCHER", "--compiler-launcher",
       "ccache, sccache or none"},
      {setting_name::compiler_cache_remote, "ARCHBUILD_COMPILER_CACHE_REMOTE", "--compiler-cache-remote",
       "ccache remote storage shared by builders (redis://host:port, http://host/path); empty: none"},
      {setting_name::compile_cluster, "ARCHBUILD_COMPILE_CLUSTER", "--compile-cluster",
       "sccache-dist scheduler URL (http://host:10600): compiles spread over its build servers; needs "
       "compiler_launcher = sccache; empty: compiles run here"},
      {setting_name::compile_cluster_token_file, "ARCHBUILD_COMPILE_CLUSTER_TOKEN_FILE", "--compile-cluster-token-file",
       "file holding the scheduler's client token (its client_auth token)"},
      {setting_name::python, "ARCHBUILD_PYTHON", "--python", "the interpreter builds run with"},
      {setting_name::offline, "ARCHBUILD_OFFLINE", "--offline", "never fetch: use the mirrors as they are"},
      {setting_name::signing_key, "ARCHBUILD_SIGNING_KEY", "--signing-key",
       "ed25519 private key (PEM) that signs each published build's provenance; empty: unsigned"},
      {setting_name::require_kernel_launch, "ARCHBUILD_REQUIRE_KERNEL_LAUNCH", "--require-kernel-launch",
       "refuse a CUDA wheel none of whose own kernels launched during device validation (default: publish it "
       "as `loaded`)"},
      {setting_name::portable, "ARCHBUILD_PORTABLE", "--portable",
       "bundle the libraries a wheel needs that only this machine has (auditwheel repair; torch's and CUDA's "
       "left to their own wheels) and tag it manylinux (default: such a wheel fails validation)"},
      {setting_name::recipe_path, "ARCHBUILD_RECIPE_PATH", "--recipe-path",
       "':'-separated dirs of site recipes, searched before the built-in ones (first dir wins)"},
      {setting_name::test_wheelhouse, "ARCHBUILD_TEST_WHEELHOUSE", "--test-wheelhouse",
       "space-separated dirs or URLs of wheels the validation venv installs the project's test dependencies "
       "from (pip --find-links); empty: PIP_FIND_LINKS, else none"},
  };
  return specs;
}

const SettingSpec* find_setting(const std::string& key) {
  for (const auto& spec : setting_specs())
    if (spec.key == key) return &spec;
  return nullptr;
}

std::string known_setting_keys() {
  std::vector<std::string> keys;
  for (const auto& spec : setting_specs()) keys.push_back(spec.key);
  return join(keys, ", ");
}

namespace {
std::string default_value(const std::string& key) {
  if (key == setting_name::cache_dir) return resolve_cache_dir_default();
  if (key == setting_name::jobs) return "auto";
  if (key == setting_name::compiler_launcher) return find_on_path("ccache") ? "ccache" : "none";
  if (key == setting_name::python) {
    auto python = find_on_path("python3");
    return python ? python->string() : "python3";
  }
  if (key == setting_name::offline || key == setting_name::require_kernel_launch || key == setting_name::portable)
    return "false";
  return "";
}

// What each setting resolved to and from where, at verbose level. load()
// runs several times a command (before and after its flags are known, in
// each build of a matrix): a line is logged once, and again only when what
// it says changes.
void log_resolved(const Settings& settings) {
  if (!log::enabled(log::Level::verbose)) return;
  static std::mutex mutex;
  static std::map<std::string, std::string> shown;
  std::lock_guard lock(mutex);
  auto note = [&](const std::string& key, const std::string& line) {
    auto& last = shown[key];
    if (last == line) return;
    last = line;
    log::write(log::Level::verbose, line);
  };
  const auto& file = settings.file();
  note("config file", "config file: " + (file.file ? file.file->string() : std::string("none")));
  for (const auto& value : settings.all())
    note(value.key,
         "setting " + value.key + " = " + (value.value.empty() ? "''" : value.value) + " (" + value.origin + ")");
  for (const auto& rule : file.mirrors)
    note("mirror " + rule.from, "setting mirror " + rule.from + " -> " + rule.to + " (config file)");
}
}  // namespace

Settings Settings::load(const std::map<std::string, std::string>& flags) {
  Settings settings;
  settings.config_ = load_user_config();
  for (const auto& spec : setting_specs()) {
    SettingValue value{spec.key, "", "default"};
    if (auto it = flags.find(spec.key); it != flags.end() && !it->second.empty()) {
      value.value = it->second;
      value.origin = spec.flag;
    } else if (const char* env = std::getenv(spec.env.c_str()); env && *env) {
      value.value = env;
      value.origin = "env " + spec.env;
    } else if (auto entry = settings.config_.values.find(spec.key); entry != settings.config_.values.end()) {
      value.value = entry->second.value;
      value.origin = "config file " + settings.config_.file->string() + ":" + std::to_string(entry->second.line);
    } else {
      value.value = default_value(spec.key);
    }
    secrets::remember_url_userinfo(value.value);  // a Redis password, a token in a cluster URL
    settings.values_.push_back(value);
  }
  log_resolved(settings);
  return settings;
}

const SettingValue& Settings::get(const std::string& key) const {
  for (const auto& value : values_)
    if (value.key == key) return value;
  throw std::logic_error("unknown setting " + key);
}

std::optional<unsigned> Settings::jobs() const {
  const auto& value = get(setting_name::jobs);
  if (value.value == "auto" || value.value.empty()) return std::nullopt;
  char* end = nullptr;
  long jobs = std::strtol(value.value.c_str(), &end, 10);
  if (*end || jobs < 1 || jobs > 4096)
    fail_bad_input("jobs = '" + value.value + "' (from " + value.origin + ") is not a positive number");
  return static_cast<unsigned>(jobs);
}

CompilerLauncher Settings::compiler_launcher() const {
  const auto& value = get(setting_name::compiler_launcher);
  const auto launcher = parse_compiler_launcher(value.value);
  if (!launcher)
    fail_bad_input("compiler_launcher '" + value.value + "' (from " + value.origin +
                   "): expected ccache, sccache or none");
  return *launcher;
}

bool Settings::flag(const std::string& key) const {
  const auto& value = get(key);
  if (value.value == "true" || value.value == "1") return true;
  if (value.value == "false" || value.value == "0" || value.value.empty()) return false;
  fail_bad_input(key + " = '" + value.value + "' (from " + value.origin + ") is not true or false");
}

bool Settings::offline() const { return flag(setting_name::offline); }

bool Settings::require_kernel_launch() const { return flag(setting_name::require_kernel_launch); }
bool Settings::portable() const { return flag(setting_name::portable); }

std::string Settings::compiler_cache_remote() const {
  const auto& value = get(setting_name::compiler_cache_remote);
  // ccache's own attributes (ccache(1), "Remote storage backends").
  static const std::set<std::string> attributes = {"read-only",  "shards",      "connect-timeout", "operation-timeout",
                                                   "keep-alive", "layout",      "bearer-token",    "header",
                                                   "umask",      "update-mtime"};
  for (const auto& storage : split_any(value.value, " ")) {
    auto refuse = [&](const std::string& why) {
      fail_bad_input("compiler_cache_remote '" + secrets::scrub(storage) + "' (from " + value.origin + ") " + why);
    };
    const auto parts = split_any(storage, "|");
    const auto& url = parts.empty() ? storage : parts.front();
    if (!(url.starts_with("redis://") || url.starts_with("redis+unix:") || url.starts_with("http://") ||
          url.starts_with("file:")))
      refuse(
          "is not ccache remote storage: expected redis://HOST[:PORT], redis+unix:PATH, http://HOST/PATH or "
          "file:DIR");
    for (char c : storage)
      if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) refuse("holds a control character");
    for (size_t i = 1; i < parts.size(); ++i) {
      const auto name = parts[i].substr(0, parts[i].find('='));
      if (!attributes.contains(name))
        refuse("has the attribute '" + printable(name) + "', which ccache does not know (" + [] {
          std::vector<std::string> names(attributes.begin(), attributes.end());
          return join(names, ", ");
        }() + ")");
    }
  }
  return value.value;
}

void Settings::check() const {
  (void)jobs();
  (void)offline();
  (void)require_kernel_launch();
  (void)portable();
  (void)compiler_cache_remote();
  (void)compiler_launcher();
  (void)cache_dir();
  (void)test_wheelhouses();
}

std::vector<std::string> Settings::test_wheelhouses() const {
  const auto& value = get(setting_name::test_wheelhouse);
  std::string text = value.value, origin = value.origin;
  // pip's own variable, read as pip reads it: an entry that is not there is
  // left out (pip warns and goes on), where archbuild's setting is refused.
  const bool from_pip = text.empty();
  if (from_pip) {
    const char* pip = std::getenv("PIP_FIND_LINKS");
    text = pip ? pip : "";
    origin = "env PIP_FIND_LINKS";
  }
  std::vector<std::string> wheelhouses;
  for (const auto& entry : split_any(text, " \t\n")) {
    if (entry.find("://") != std::string::npos) {
      wheelhouses.push_back(entry);
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(entry, ec))
      wheelhouses.push_back(std::filesystem::absolute(entry).lexically_normal().string());
    else if (from_pip)
      log::verbose("test dependencies: PIP_FIND_LINKS entry '{}' is not a directory: left out", entry);
    else
      fail_bad_input("test_wheelhouse '" + entry + "' (from " + origin + ") is not a directory or a URL");
  }
  return wheelhouses;
}

std::vector<std::filesystem::path> Settings::recipe_dirs() const {
  const auto& value = get(setting_name::recipe_path);
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : split_any(value.value, ":")) {
    auto dir = std::filesystem::absolute(entry).lexically_normal();
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      fail_bad_input("recipe_path entry '" + entry + "' (from " + value.origin + ") is not a directory" +
                     (entry == dir.string() ? "" : " (" + dir.string() + ")"));
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  return dirs;
}

std::filesystem::path Settings::cache_dir() const {
  const auto& value = get(setting_name::cache_dir);
  return checked_user_path(value.value, "cache_dir (from " + value.origin + ")");
}

std::filesystem::path Settings::made_cache_dir() const {
  const auto dir = cache_dir();
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return dir;
  // A file where the dir or one of its parents goes is the setting's fault
  // (bad input); a place that refuses a new directory (/proc, a read-only
  // or full disk, a permission) is this machine's.
  for (auto parent = dir; !parent.empty() && parent != parent.root_path(); parent = parent.parent_path())
    if (std::filesystem::exists(parent, ec) && !std::filesystem::is_directory(parent, ec))
      fail_bad_input("cache_dir (from " + get(setting_name::cache_dir).origin + ") " + dir.string() + ": " +
                     parent.string() + " is not a directory");
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    fail_environment("cannot create the cache dir " + dir.string() + " (cache_dir from " +
                     get(setting_name::cache_dir).origin +
                     "): " + (ec ? ec.message() : "not a directory after creating it"));
  return dir;
}

std::filesystem::path Settings::python() const {
  const auto& value = get(setting_name::python);
  std::error_code ec;
  if (value.value.find('/') != std::string::npos && std::filesystem::is_directory(value.value, ec))
    fail_bad_input("python '" + value.value + "' (from " + value.origin + ") is a directory, not an interpreter");
  auto python = find_on_path(value.value);
  // One the user named (a flag, the environment, the config file) is their
  // mistake; the default missing is this machine's.
  if (!python && value.origin != "default")
    fail_bad_input("python '" + value.value + "' (from " + value.origin + ") not found");
  if (!python) fail_environment("python '" + value.value + "' (from " + value.origin + ") not found");
  return std::filesystem::absolute(*python);
}

}  // namespace archbuild
