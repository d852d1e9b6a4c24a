#include "source/pypi_sdist.h"

#include <stdlib.h>

#include <algorithm>
#include <optional>

#include "config/setting_names.h"
#include "config/settings.h"
#include "core/cache_layout.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/json_text.h"
#include "core/log.h"
#include "core/private_dir.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "core/system_info.h"
#include "process/run_process.h"
#include "recipe/repository_url.h"
#include "source/git_ref_name.h"
#include "source/git_session.h"
#include "source/pep440_version.h"

namespace archbuild {

namespace {

constexpr auto kFetchTimeout = std::chrono::minutes(30);
constexpr std::string_view kShaMarker = "sdist-sha256: ";

[[noreturn]] void bad_spec(const std::string& text, const std::string& why) {
  fail_bad_input("'" + text + "': " + why + " (expected pypi:NAME==VERSION, like pypi:torch-scatter==2.1.2)");
}

bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name.find('\0') == std::string::npos &&
         name.front() != '.' && is_sdist_file_name(name);
}

bool is_sha256_hex(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The record of a download; nullopt when absent or not one archbuild wrote
// for this version (then the sdist is downloaded again).
std::optional<SdistOrigin> read_record(const std::filesystem::path& file, const PypiSpec& spec) {
  std::string text;
  if (!read_regular_file(file, 1 << 20, text).empty()) return std::nullopt;  // absent, or not a file archbuild wrote
  try {
    auto origin = SdistOrigin::from_json(nlohmann::json::parse(text));
    if (origin.project != spec.name || origin.version != spec.version || !is_plain_file_name(origin.file) ||
        !is_sha256_hex(origin.sha256))
      return std::nullopt;
    return origin;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void write_record(const std::filesystem::path& file, const SdistOrigin& origin) {
  auto partial = file.string() + ".partial";
  write_whole_file(partial, json_text(origin.to_json()) + "\n");
  std::filesystem::rename(partial, file);
}

// Why the fetcher failed: its last error lines, then what it noted on the
// way ("sdist_fetch: ..." lines: an index or links it ignored), so that a
// note never reads as the error and is not lost either.
std::string fetcher_failure(const std::string& err) {
  std::string errors, notes;
  for (const auto& line : split_any(err, "\n")) {
    if (line.rfind("sdist_fetch: ", 0) == 0)
      notes += (notes.empty() ? "" : "; ") + line.substr(13);
    else
      errors += line + "\n";
  }
  auto message = last_lines(errors, 4, "\n");
  if (!notes.empty()) message += (message.empty() ? "" : " ") + std::string("(the fetcher noted: ") + notes + ")";
  return message;
}

constexpr std::string_view kDroppedMarker = "dropped: ";

// What the commit of an sdist left out (VCS metadata), from its message.
std::vector<std::string> dropped_in_message(const char* message) {
  std::vector<std::string> dropped;
  if (!message) return dropped;
  for (const auto& line : split_any(message, "\n"))
    if (line.starts_with(kDroppedMarker)) dropped.push_back(line.substr(kDroppedMarker.size()));
  return dropped;
}

// Commits the sdist's files to the mirror of `repository`, tagged with the
// version; an existing tag of the same sdist (the sha256 in its message) is
// kept. Returns what was left out (VCS metadata), recorded in the message.
std::vector<std::string> commit_to_mirror(const SdistOrigin& origin, const std::filesystem::path& file,
                                          const std::string& repository, const MirrorCache& mirrors,
                                          const SdistLimits& limits) {
  ensure_libgit2();
  const auto path = mirrors.path_for(repository);
  std::filesystem::create_directories(path.parent_path());
  FileLock lock(path.string() + ".lock");  // the lock MirrorCache takes for this mirror
  bool created = false;
  git_repository* raw = nullptr;
  if (git_repository_open_bare(&raw, path.c_str()) != 0) {
    git_check(git_repository_init(&raw, path.c_str(), /*is_bare=*/1), "cannot create mirror " + path.string());
    created = true;
  }
  Repository repo(raw);
  const std::string tag = "refs/tags/" + origin.version;
  const std::string marker = std::string(kShaMarker) + origin.sha256;
  git_object* existing = nullptr;
  if (git_revparse_single(&existing, repo.get(), (tag + "^{commit}").c_str()) == 0) {
    GitObject holder(existing);
    const char* message = git_commit_message(reinterpret_cast<git_commit*>(existing));
    if (message && std::string(message).find(marker) != std::string::npos) return dropped_in_message(message);
  }
  try {
    auto members = list_sdist_members(file, limits);
    std::vector<std::string> dropped;
    auto tree_entries = sdist_tree(members, origin.file, &dropped);
    git_oid tree_id = write_sdist_tree(repo.get(), file, members, tree_entries, limits);
    git_tree* raw_tree = nullptr;
    git_check(git_tree_lookup(&raw_tree, repo.get(), &tree_id), "cannot read the tree of " + origin.file);
    GitTree tree(raw_tree);
    // A fixed author and time: the same sdist is the same commit on every machine.
    git_signature* signature = nullptr;
    git_check(git_signature_new(&signature, "archbuild", "archbuild@localhost", 0, 0), "cannot make a signature");
    std::unique_ptr<git_signature, void (*)(git_signature*)> signature_holder(signature, git_signature_free);
    std::string message = origin.project + " " + origin.version + ": the files of the sdist " + origin.file + "\n\n" +
                          marker + "\n";
    for (const auto& path_dropped : dropped) message += std::string(kDroppedMarker) + path_dropped + "\n";
    git_oid commit_id;
    git_check(git_commit_create(&commit_id, repo.get(), nullptr, signature, signature, "UTF-8", message.c_str(),
                                tree.get(), 0, nullptr),
              "cannot commit " + origin.file);
    git_reference* ref = nullptr;
    git_check(git_reference_create(&ref, repo.get(), tag.c_str(), &commit_id, /*force=*/1, "archbuild sdist"),
              "cannot tag " + origin.version + " in " + path.string());
    git_reference_free(ref);
    return dropped;
  } catch (...) {
    if (created) {
      repo.reset();
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
    throw;
  }
}

std::string dropped_note(const std::string& file, const std::vector<std::string>& dropped) {
  std::vector<std::string> shown(dropped.begin(), dropped.begin() + std::min<size_t>(5, dropped.size()));
  return "left out of " + file + " the VCS metadata " + join(shown, ", ") + (dropped.size() > 5 ? ", ..." : "") +
         " (a submodule's or a checkout's leftovers; nothing builds from them)";
}

}  // namespace

void check_pypi_version(const std::string& version, const std::string& what) {
  // PEP 440 (public version, optional local label), as pip accepts it; long ones are refused first.
  if (version.size() > kMaxVersionLength)
    bad_spec(what, "a version of " + std::to_string(version.size()) + " characters is longer than the " +
                       std::to_string(kMaxVersionLength) + " archbuild accepts");
  if (!is_pep440_version(version)) bad_spec(what, "'" + version + "' is not one exact version (PEP 440)");
  if (!is_valid_git_ref_name(version)) bad_spec(what, "'" + version + "' cannot be a git tag name");
}

PypiSpec parse_pypi_spec(const std::string& text) {
  if (!is_pypi_repository(text)) bad_spec(text, "not a pypi: source");
  std::string body = trim(text.substr(kPypiPrefix.size()));
  if (body.empty()) bad_spec(text, "no project name");
  std::string name = body, version;
  if (auto op = body.find("=="); op != std::string::npos) {
    name = trim(body.substr(0, op));
    version = trim(body.substr(op + 2));
    if (version.starts_with("=")) bad_spec(text, "=== (arbitrary equality) names no release");
    if (version.empty()) bad_spec(text, "no version after ==");
  }
  if (name.find('[') != std::string::npos) bad_spec(text, "extras ([...]) do not apply to an sdist");
  if (name.find_first_of("<>!~=@;,* ") != std::string::npos)
    bad_spec(text, "only an exact version (==VERSION) names one sdist");
  if (!valid_project_name(name)) bad_spec(text, "'" + name + "' is not a valid project name");
  if (!version.empty()) check_pypi_version(version, text);
  return {canonical_project_name(name), version};
}

SdistFetcher::SdistFetcher(const Settings& settings, UrlRewriter rewriter, SdistLimits limits)
    : settings_(settings), rewriter_(std::move(rewriter)), limits_(limits) {}

std::vector<std::string> SdistFetcher::fetcher_command(const std::vector<std::string>& arguments) const {
  const auto script = data_dir() / "recipes" / "frontends" / "sdist_fetch.py";
  std::vector<std::string> command = {settings_.python().string(), script.string()};
  for (const auto& rule : rewriter_.rules()) {
    command.push_back("--rewrite");
    command.push_back(rule.from + "=" + rule.to);
  }
  command.insert(command.end(), arguments.begin(), arguments.end());
  return command;
}

std::vector<std::string> SdistFetcher::remove_stale_downloads(bool dry_run) const {
  const auto sdists = CacheLayout(settings_.cache_dir()).sdists();
  std::error_code ec;
  if (std::filesystem::is_symlink(sdists, ec)) {  // never followed out of the cache
    log::warning("cache gc: {} is a symbolic link; its downloads are left alone", sdists.string());
    return {};
  }
  if (!std::filesystem::is_directory(sdists, ec)) return {};
  std::vector<std::string> arguments = {"--sweep", sdists.string()};
  if (dry_run) arguments.push_back("--dry-run");
  ProcessOptions options;
  options.timeout = kFetchTimeout;
  auto result = run_process(fetcher_command(arguments), options);
  std::vector<std::string> removed;
  const std::string marker = dry_run ? "sdist_fetch: would remove " : "sdist_fetch: removed ";
  for (const auto& line : split_any(result.err, "\n"))
    if (line.starts_with(marker))
      removed.push_back(line.substr(marker.size(), line.rfind(", a download") - marker.size()));
  if (!result.succeeded())
    log::warning("cache gc: the sweep of stale sdist downloads ended with {}", result.describe_status());
  return removed;
}

std::string SdistFetcher::newest_version(const std::string& name, std::vector<std::string>& notes) const {
  const std::string what = std::string(kPypiPrefix) + name;
  if (settings_.offline()) {
    std::vector<std::string> cached;
    std::error_code ec;
    const auto dir = CacheLayout(settings_.cache_dir()).sdists() / name;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json") cached.push_back(it->path().stem().string());
    std::sort(cached.begin(), cached.end());
    fail_environment(what + " names no version, and offline (" + settings_.get(setting_name::offline).origin +
                     ") the index cannot say which is newest: give pypi:" + name + "==VERSION" +
                     (cached.empty() ? "" : " (the cache holds " + join(cached, ", ") + ")"));
  }
  ProcessOptions options;
  options.timeout = kFetchTimeout;
  auto result = run_process(fetcher_command({"--name", name, "--newest"}), options);
  if (!result.succeeded()) {
    std::string message = fetcher_failure(result.err);
    if (message.empty()) message = "the sdist fetcher ended with " + result.describe_status();
    if (!result.timed_out && !result.status.signaled && result.status.code == 2) fail_bad_input(what + ": " + message);
    fail_environment(what + ": " + message);
  }
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(result.out);
  } catch (const nlohmann::json::exception&) {
  }
  const std::string version = answer.is_object() ? answer.value("version", "") : "";
  check_pypi_version(version, what + " (the newest release the index lists)");
  notes.push_back(what + ": the newest release with an sdist on " + answer.value("index", std::string("the index")) +
                  " is " + version + " (pypi:" + name + "==VERSION picks another)");
  return version;
}

SdistSource SdistFetcher::prepare(const PypiSpec& asked, const MirrorCache& mirrors) const {
  std::vector<std::string> resolved_notes;
  PypiSpec spec = asked;
  if (spec.version.empty()) spec.version = newest_version(spec.name, resolved_notes);
  const std::string what = std::string(kPypiPrefix) + spec.name + "==" + spec.version;
  const auto dir = CacheLayout(settings_.cache_dir()).sdists() / spec.name;
  std::filesystem::create_directories(dir);
  const std::string stem = path_safe(spec.version);
  FileLock lock(dir / (stem + ".lock"));  // one download of a version at a time
  const auto record_file = dir / (stem + ".json");
  SdistSource source{std::string(kPypiPrefix) + spec.name, spec.version, {}, resolved_notes};

  auto origin = read_record(record_file, spec);
  std::error_code ec;
  if (origin) {
    // The file is checked again on every use: a cache entry edited since is no source to build.
    const auto file = dir / origin->file;
    std::string actual;
    const bool present = std::filesystem::is_regular_file(std::filesystem::symlink_status(file, ec)) &&
                         hash_regular_file(file, actual).empty();
    if (!present || actual != origin->sha256) {
      std::string why = !present ? "is missing (or not a regular file)"
                                 : "no longer has the sha256 recorded when it was downloaded (" +
                                       origin->sha256.substr(0, 16) + "..., now " + actual.substr(0, 16) + "...)";
      if (settings_.offline())
        fail_environment("the cached sdist " + file.string() + " " + why + ", and offline (" +
                         settings_.get(setting_name::offline).origin + ") it cannot be downloaded again; remove " +
                         record_file.string() + " and run online");
      source.notes.push_back("the cached sdist " + file.string() + " " + why + ": downloaded again");
      std::filesystem::remove(file, ec);
      std::filesystem::remove(record_file, ec);
      origin.reset();
    }
  }
  if (!origin) {
    if (settings_.offline())
      fail_environment(what + ": offline (" + settings_.get(setting_name::offline).origin +
                       "), and the cache holds no sdist of it (" + dir.string() + ")");
    // beside the cache entry, so that a rename moves the download in
    PrivateDir download(dir, ".download");
    ProcessOptions options;
    options.timeout = kFetchTimeout;
    auto result = run_process(fetcher_command({"--name", spec.name, "--version", spec.version, "--dest",
                                               download.path.string(), "--max-bytes",
                                               std::to_string(limits_.max_download_bytes)}),
                              options);
    if (!result.succeeded()) {
      std::string message = fetcher_failure(result.err);
      if (message.empty()) message = "the sdist fetcher ended with " + result.describe_status();
      if (!result.timed_out && !result.status.signaled && result.status.code == 2)
        fail_bad_input(what + ": " + message);
      fail_environment(what + ": " + message);
    }
    // What the fetcher warns of (an index it ignored) is worth a note.
    for (const auto& line : split_any(result.err, "\n"))
      if (line.starts_with("sdist_fetch: ")) source.notes.push_back(line.substr(13));
    nlohmann::json answer;
    try {
      answer = nlohmann::json::parse(result.out);
    } catch (const nlohmann::json::exception&) {
    }
    if (!answer.is_object())
      fail_environment(what + ": the sdist fetcher's answer is not a JSON object: " + last_lines(result.out, 2, "\n"));
    SdistOrigin fetched;
    fetched.project = spec.name;
    fetched.version = spec.version;
    fetched.file = answer.value("file", "");
    fetched.url = answer.value("url", "");
    fetched.index = answer.value("index", "");
    const auto downloaded = download.path / fetched.file;
    if (!is_plain_file_name(fetched.file) ||
        !std::filesystem::is_regular_file(std::filesystem::symlink_status(downloaded, ec)))
      fail_environment(what + ": the index named '" + fetched.file + "', which is no sdist file name archbuild takes");
    if (std::filesystem::file_size(downloaded, ec) > limits_.max_download_bytes)
      fail_bad_input(what + ": " + fetched.file + " is larger than " + std::to_string(limits_.max_download_bytes) +
                     " bytes");
    fetched.sha256 = sha256_file_hex(downloaded);
    const auto& listed = answer["index_sha256"];
    if (!listed.is_null() && !listed.is_string())
      fail_environment(what + ": the sdist fetcher's index_sha256 is neither null nor a string");
    if (listed.is_string()) {
      if (to_lower(listed.get<std::string>()) != fetched.sha256)
        fail_environment(what + ": hash mismatch: " + fetched.index + " lists sha256 " + listed.get<std::string>() +
                         " for " + fetched.file + ", the download from " + fetched.url + " has " + fetched.sha256 +
                         "; nothing was kept");
      fetched.index_hash = true;
    } else {
      source.notes.push_back(fetched.index + " gives no sha256 for " + fetched.file + ": recorded the download's (" +
                             fetched.sha256.substr(0, 16) + "...), checked on every later use");
    }
    if (answer.contains("yanked") && answer["yanked"].is_string())
      source.notes.push_back(
          spec.name + " " + spec.version + " is yanked on " + fetched.index +
          (answer["yanked"].get<std::string>().empty() ? "" : " (" + answer["yanked"].get<std::string>() + ")"));
    source.notes.push_back("downloaded " + fetched.file + " (" + format_bytes(std::filesystem::file_size(downloaded)) +
                           ") from " + fetched.url);
    std::filesystem::rename(downloaded, dir / fetched.file);
    write_record(record_file, fetched);
    origin = fetched;
  }
  source.origin = *origin;
  try {
    auto dropped = commit_to_mirror(source.origin, dir / source.origin.file, source.repository, mirrors, limits_);
    if (!dropped.empty()) source.notes.push_back(dropped_note(source.origin.file, dropped));
  } catch (const UserError&) {
    // A refused sdist is not kept: the next run downloads it again and refuses it again.
    std::filesystem::remove(dir / source.origin.file, ec);
    std::filesystem::remove(record_file, ec);
    throw;
  }
  return source;
}

}  // namespace archbuild

namespace archbuild {

SdistSource SdistFetcher::prepare_local(const std::filesystem::path& archive, const PypiSpec& spec,
                                        const MirrorCache& mirrors) const {
  check_pypi_version(spec.version, archive.string());
  std::error_code ec;
  const auto size = std::filesystem::file_size(archive, ec);
  if (ec) fail_bad_input("cannot read the sdist " + archive.string() + ": " + ec.message());
  if (size > limits_.max_download_bytes)
    fail_bad_input("the sdist " + archive.string() + " is larger than " + std::to_string(limits_.max_download_bytes) +
                   " bytes");
  SdistSource source{archive.string(), spec.version, {}, {}};
  auto& origin = source.origin;
  origin.project = spec.name;
  origin.version = spec.version;
  origin.file = archive.filename().string();
  origin.url = "file://" + archive.string();
  origin.sha256 = sha256_file_hex(archive);
  auto dropped = commit_to_mirror(origin, archive, source.repository, mirrors, limits_);
  source.notes.push_back("building the sdist " + archive.string() + " (" + format_bytes(size) + ", sha256 " +
                         origin.sha256.substr(0, 16) + "...)");
  if (!dropped.empty()) source.notes.push_back(dropped_note(origin.file, dropped));
  return source;
}

}  // namespace archbuild
