#pragma once

#include <string>
#include <vector>

#include "cache/wheel_store.h"
#include "remote/http_transport.h"
#include "remote/s3_settings.h"

namespace archbuild {

// Where and as whom to upload, as twine takes it:
//   URL          --repository-url, else TWINE_REPOSITORY_URL, else the
//                `repository` of the --repository section of ~/.pypirc
//   username     TWINE_USERNAME, else the section's `username` (with
//                --repository, or the section whose `repository` is the URL)
//   password     TWINE_PASSWORD, else the section's `password`, else the
//                `keyring` command's answer for (URL, username) when it is on PATH
// No username and password: the upload is anonymous.
struct UploadTarget {
  std::string url;
  std::string username, password;
  // For messages: where the username and the password came from
  // ("TWINE_USERNAME", "~/.pypirc [local]", "keyring"); empty when not given.
  std::string credentials_from, password_from;
};

UploadTarget resolve_upload_target(const std::string& repository_url, const std::string& repository_name,
                                   const EnvironmentLookup& environment);

struct UploadOutcome {
  enum class Kind { uploaded, already_there, refused } kind;
  std::string file;
  std::string why;  // the server's answer when not uploaded
};

// Every published wheel of the store (and, with `variants`, each variant
// wheel) through the upload API (legacy `:action=file_upload`, what twine,
// pypiserver, devpi, Artifactory, Nexus and the GitLab and Gitea registries
// speak), after the same checks as `cache push`. A server that answers 409
// (or says the file exists) has it already; any other 4xx refuses that file
// only, and the rest still go up; 401/403 (credentials) stop the push with
// exit 3 before another file is sent.
std::vector<UploadOutcome> upload_to_repository(const WheelStore& from, const UploadTarget& target,
                                                HttpTransport& transport, bool variants,
                                                std::vector<std::string>& not_pushed);

// The upload form's metadata fields from a wheel's METADATA (name, version,
// summary, requires_dist, ...), as twine sends them.
std::vector<std::pair<std::string, std::string>> upload_metadata_fields(const std::string& metadata);

}  // namespace archbuild
