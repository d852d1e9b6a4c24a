#include "remote/package_upload.h"

#include <set>
#include <sstream>

#include <zip.h>

#include "cache/provenance.h"
#include "cache/store_maintenance.h"
#include "config/ini_file.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/run_process.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {

std::string url_without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

UploadTarget resolve_upload_target(const std::string& repository_url, const std::string& repository_name,
                                   const EnvironmentLookup& environment) {
  UploadTarget target;
  const auto pypirc_file = environment("HOME").value_or("/") + "/.pypirc";
  const auto pypirc = IniFile::load(pypirc_file);
  std::string section = repository_name;
  std::string url_origin = "--repository-url";
  target.url = repository_url;
  if (target.url.empty()) {
    if (auto url = environment("TWINE_REPOSITORY_URL")) {
      target.url = *url;
      url_origin = "TWINE_REPOSITORY_URL";
    }
  }
  if (!section.empty()) {
    if (!pypirc || !pypirc->has_section(section))
      fail_bad_input("--repository " + section + ": no [" + section + "] section in " + pypirc_file);
    if (target.url.empty()) {
      auto url = pypirc->get(section, "repository");
      if (!url) fail_bad_input("[" + section + "] in " + pypirc_file + " has no `repository` URL");
      target.url = *url;
      url_origin = pypirc->where(section, "repository");
    }
  }
  if (target.url.empty()) fail_bad_input("cache push: give --repository-url URL (or --repository NAME from ~/.pypirc)");
  check_http_url(target.url, "repository URL (from " + url_origin + ")");
  target.url = url_without_trailing_slash(target.url) + "/";
  if (section.empty() && pypirc) {
    // The section that names this URL, as a user of twine would have it.
    std::istringstream sections(pypirc->get("distutils", "index-servers").value_or(""));
    for (std::string name; sections >> name;)
      if (auto url = pypirc->get(name, "repository"); url && url_without_trailing_slash(*url) + "/" == target.url)
        section = name;
  }
  auto from_section = [&](const std::string& key) -> std::optional<std::string> {
    return section.empty() || !pypirc ? std::nullopt : pypirc->get(section, key);
  };
  if (auto user = environment("TWINE_USERNAME")) {
    target.username = *user;
    target.credentials_from = "TWINE_USERNAME";
  } else if (auto user = from_section("username")) {
    target.username = *user;
    target.credentials_from = pypirc_file + " [" + section + "]";
  }
  if (auto password = environment("TWINE_PASSWORD")) {
    target.password = *password;
    secrets::remember(target.password);
    target.password_from = "TWINE_PASSWORD";
  } else if (auto password = from_section("password")) {
    target.password = *password;
    secrets::remember(target.password);
    target.password_from = pypirc_file + " [" + section + "]";
  } else if (!target.username.empty()) {
    if (auto keyring = find_on_path("keyring")) {
      auto answer = run_process({keyring->string(), "get", target.url, target.username},
                                {.timeout = std::chrono::seconds(30), .output_is_secret = true});
      if (answer.succeeded() && !trim(answer.out).empty()) {
        target.password = trim(answer.out);
        secrets::remember(target.password);
        target.password_from = "keyring";
      }
    }
  }
  return target;
}

namespace {
// What a refused upload's message says about the credentials sent.
std::string credentials_note(const UploadTarget& target) {
  if (target.username.empty() && target.password.empty())
    return " (no credentials given: set TWINE_USERNAME and TWINE_PASSWORD, or a ~/.pypirc section)";
  if (target.username.empty())
    return " (a password from " + target.password_from +
           " but no username: set TWINE_USERNAME, or username in the ~/.pypirc section)";
  if (target.password.empty())
    return " (username from " + target.credentials_from +
           ", no password: set TWINE_PASSWORD, password in the ~/.pypirc section, or one in keyring)";
  return " (credentials from " + target.credentials_from +
         (target.password_from == target.credentials_from ? "" : ", password from " + target.password_from) + ")";
}
}  // namespace

std::vector<std::pair<std::string, std::string>> upload_metadata_fields(const std::string& metadata) {
  static const std::set<std::string> kSent = {"metadata_version", "name",           "version",
                                              "summary",          "home_page",      "author",
                                              "author_email",     "license",        "requires_python",
                                              "requires_dist",    "provides_extra", "project_urls",
                                              "classifiers",      "keywords",       "description_content_type"};
  std::vector<std::pair<std::string, std::string>> fields;
  std::istringstream in(metadata);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // the body (the long description) follows
    if ((line[0] == ' ' || line[0] == '\t') && !fields.empty()) {
      fields.back().second += "\n" + trim(line);
      continue;
    }
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto key = to_lower(trim(line.substr(0, colon)));
    for (auto& c : key)
      if (c == '-') c = '_';
    if (key == "classifier") key = "classifiers";
    if (key == "project_url") key = "project_urls";
    if (kSent.count(key)) fields.emplace_back(key, trim(line.substr(colon + 1)));
  }
  return fields;
}

namespace {

std::string wheel_metadata(const std::filesystem::path& wheel) {
  auto archive = open_wheel_for_reading(wheel);
  const auto dist_info = find_dist_info(archive.get());
  const auto name = dist_info + "/METADATA";
  const auto index = zip_name_locate(archive.get(), name.c_str(), 0);
  if (dist_info.empty() || index < 0) fail_bad_input(wheel.string() + " has no METADATA");
  return read_zip_member(archive.get(), index, name);
}

bool says_exists(const HttpResponse& response) {
  const auto text = to_lower(response.body);
  return response.status == 409 || text.find("already exist") != std::string::npos ||
         text.find("file exists") != std::string::npos;
}

UploadOutcome upload_one(const std::filesystem::path& wheel, const UploadTarget& target, HttpTransport& transport) {
  const auto file = wheel.filename().string();
  auto parsed = WheelName::parse(file);
  auto form = std::make_shared<MultipartForm>();
  form->fields = {{":action", "file_upload"}, {"protocol_version", "1"}, {"filetype", "bdist_wheel"}};
  form->fields.emplace_back("pyversion", parsed ? parsed->python : "py3");
  std::string digest;
  if (auto why = hash_regular_file(wheel, digest); !why.empty()) fail_environment(wheel.string() + " " + why);
  form->fields.emplace_back("sha256_digest", digest);
  for (auto& field : upload_metadata_fields(wheel_metadata(wheel))) form->fields.push_back(std::move(field));
  form->file_field = "content";
  form->file = wheel;
  HttpRequest request{.method = "POST", .url = target.url};
  request.form = form;
  // The file has gone up whatever the answer's length: only its start is
  // read (the status says how it went), and the next file is still sent.
  request.max_body_bytes = 1 << 20;
  request.cut_body_at_cap = true;
  auto response = transport.send(request);
  if (response.status == 401 || response.status == 403)
    fail_environment(target.url + " refused the upload of " + file + ": HTTP " + std::to_string(response.status) + " " +
                     http_error_summary(response) + credentials_note(target));
  if (response.status / 100 == 2) return {UploadOutcome::Kind::uploaded, file, {}};
  if (response.status / 100 == 3)
    return {UploadOutcome::Kind::refused, file,
            "HTTP " + std::to_string(response.status) + " redirect to " + response.header("location") +
                " (give the upload URL itself)"};
  const auto why = "HTTP " + std::to_string(response.status) + " " + http_error_summary(response);
  if (says_exists(response)) return {UploadOutcome::Kind::already_there, file, why};
  return {UploadOutcome::Kind::refused, file, why};
}

}  // namespace

std::vector<UploadOutcome> upload_to_repository(const WheelStore& from, const UploadTarget& target,
                                                HttpTransport& transport, bool variants,
                                                std::vector<std::string>& not_pushed) {
  std::vector<UploadOutcome> outcomes;
  InterruptibleScope between_files;
  for (const auto& listed : from.entries()) {
    if (listed.wheels.empty()) continue;
    FileLock source_lock(from.lock_path(listed.hash));
    auto entry = from.find({listed.key_text, listed.hash});
    if (!entry) continue;
    if (auto problems = push_problems(*entry); !problems.empty()) {
      not_pushed.insert(not_pushed.end(), problems.begin(), problems.end());
      continue;
    }
    auto files = entry->wheels;
    if (variants) files.insert(files.end(), entry->variants.begin(), entry->variants.end());
    for (const auto& wheel : files) {
      if (pending_interrupt())
        throw UserError(ExitCode::interrupted,
                        "interrupted: " + std::to_string(outcomes.size()) + " files sent to " + target.url);
      outcomes.push_back(upload_one(wheel, target, transport));
      const auto& outcome = outcomes.back();
      log::verbose("{} {}: {}", target.url, outcome.file,
                   outcome.kind == UploadOutcome::Kind::uploaded ? std::string("uploaded") : outcome.why);
    }
  }
  return outcomes;
}

}  // namespace archbuild
