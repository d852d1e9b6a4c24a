#include "remote/s3_settings.h"

#include <algorithm>
#include <cstdlib>

#include "config/ini_file.h"
#include "core/error.h"
#include "core/log.h"
#include "core/secrets.h"
#include "core/strings.h"

namespace archbuild {

bool is_s3_location(const std::string& text) { return text.rfind("s3://", 0) == 0; }

S3Location parse_s3_location(const std::string& text) {
  if (!is_s3_location(text)) fail_bad_input("not an s3:// location: " + text);
  const auto rest = text.substr(5);
  const auto slash = rest.find('/');
  S3Location location{rest.substr(0, slash), slash == std::string::npos ? "" : rest.substr(slash + 1)};
  while (!location.prefix.empty() && location.prefix.back() == '/') location.prefix.pop_back();
  const auto& bucket = location.bucket;
  bool allowed = bucket.size() >= 3 && bucket.size() <= 63 &&
                 std::isalnum(static_cast<unsigned char>(bucket.front())) &&
                 std::isalnum(static_cast<unsigned char>(bucket.back())) && bucket.find("..") == std::string::npos;
  for (char c : bucket)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
          c == '.'))
      allowed = false;
  if (!allowed)
    fail_bad_input("bucket name '" + bucket + "' in " + text +
                   " is not one S3 allows (3 to 63 lowercase letters, digits, '-' and '.', starting and ending with a "
                   "letter or digit)");
  size_t start = 0;
  while (!location.prefix.empty() && start <= location.prefix.size()) {
    auto end = location.prefix.find('/', start);
    if (end == std::string::npos) end = location.prefix.size();
    auto segment = location.prefix.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..")
      fail_bad_input("prefix '" + location.prefix + "' in " + text + " has an empty, '.' or '..' segment");
    for (unsigned char c : segment)
      if (c < 0x20 || c == 0x7f)
        fail_bad_input("prefix '" + location.prefix + "' in " + text + " holds a control character");
    start = end + 1;
  }
  return location;
}

EnvironmentLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value || !*value) return std::nullopt;
    return std::string(value);
  };
}

namespace {
std::string checked_endpoint(std::string endpoint, const std::string& origin) {
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  const bool scheme = endpoint.rfind("http://", 0) == 0 || endpoint.rfind("https://", 0) == 0;
  const auto host = scheme ? endpoint.substr(endpoint.find("//") + 2) : std::string();
  if (!scheme || host.empty() || host.find_first_of("/?#@ ") != std::string::npos)
    fail_bad_input("S3 endpoint '" + secrets::scrub(endpoint) + "' (from " + origin +
                   ") is not http(s)://HOST[:PORT] (credentials go in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)");
  const auto bracket = host.rfind(']');  // an IPv6 address's colons are not a port's
  if (const auto colon = host.rfind(':');
      colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    const auto port = host.substr(colon + 1);
    const bool digits = !port.empty() && port.size() <= 5 &&
                        std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoul(port) < 1 || std::stoul(port) > 65535)
      fail_bad_input("S3 endpoint '" + endpoint + "' (from " + origin + ") has the port '" + printable(port) +
                     "': a port is a number from 1 to 65535");
  }
  return endpoint;
}
}  // namespace

S3Settings resolve_s3_settings(const EnvironmentLookup& environment) {
  S3Settings settings;
  settings.profile = environment("AWS_PROFILE").value_or("default");
  const auto home = environment("HOME").value_or("/");
  const auto config_file = environment("AWS_CONFIG_FILE").value_or(home + "/.aws/config");
  const auto credentials_file = environment("AWS_SHARED_CREDENTIALS_FILE").value_or(home + "/.aws/credentials");
  const auto config = IniFile::load(config_file);
  const auto credentials = IniFile::load(credentials_file);
  // The config file names profiles "[profile NAME]", except "[default]".
  const auto config_section = settings.profile == "default" ? std::string("default") : "profile " + settings.profile;
  auto from_config = [&](const std::string& key) -> std::optional<std::string> {
    return config ? config->get(config_section, key) : std::nullopt;
  };

  if (auto value = environment("AWS_ENDPOINT_URL_S3"))
    settings.endpoint = checked_endpoint(*value, "AWS_ENDPOINT_URL_S3");
  else if (auto value = environment("AWS_ENDPOINT_URL"))
    settings.endpoint = checked_endpoint(*value, "AWS_ENDPOINT_URL");
  else if (auto value = from_config("endpoint_url"))
    settings.endpoint = checked_endpoint(*value, config->where(config_section, "endpoint_url"));

  std::string region_from;
  if (auto value = environment("AWS_REGION")) {
    settings.region = *value;
    region_from = "AWS_REGION";
  } else if (auto value = environment("AWS_DEFAULT_REGION")) {
    settings.region = *value;
    region_from = "AWS_DEFAULT_REGION";
  } else if (auto value = from_config("region")) {
    settings.region = *value;
    region_from = config->where(config_section, "region");
  }
  if (settings.region.empty()) settings.region = "us-east-1";
  for (char c : settings.region)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-'))
      fail_bad_input("AWS region '" + settings.region + "' (from " + region_from +
                     ") is not a region name (letters, digits and '-', like eu-west-1)");
  if (settings.endpoint.empty()) {
    settings.endpoint = "https://s3." + settings.region + ".amazonaws.com";
    settings.path_style = false;
  }

  auto key = environment("AWS_ACCESS_KEY_ID"), secret = environment("AWS_SECRET_ACCESS_KEY");
  if (key && secret) {
    settings.access_key = *key;
    settings.secret_key = *secret;
    settings.session_token = environment("AWS_SESSION_TOKEN").value_or("");
    settings.credentials_from = "environment";
  } else {
    for (const auto* file : {&credentials, &config}) {
      if (!*file) continue;
      const auto section = file == &credentials ? settings.profile : config_section;
      auto file_key = (*file)->get(section, "aws_access_key_id");
      auto file_secret = (*file)->get(section, "aws_secret_access_key");
      if (!file_key || !file_secret) continue;
      settings.access_key = *file_key;
      settings.secret_key = *file_secret;
      settings.session_token = (*file)->get(section, "aws_session_token").value_or("");
      settings.credentials_from = (*file)->where(section, "aws_access_key_id");
      break;
    }
  }
  secrets::remember(settings.secret_key);
  secrets::remember(settings.session_token);
  if (settings.access_key.empty() || settings.secret_key.empty())
    fail_bad_input("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give profile '" +
                   settings.profile + "' aws_access_key_id and aws_secret_access_key in " + credentials_file + " or " +
                   config_file + " (AWS_PROFILE picks the profile)");
  return settings;
}

std::string s3_uri_encode(const std::string& text, bool keep_slash) {
  return percent_encode(text, keep_slash ? "/" : "");
}

std::string s3_bucket_url(const S3Settings& settings, const S3Location& location) {
  if (settings.path_style) return settings.endpoint + "/" + location.bucket;
  const auto scheme_end = settings.endpoint.find("//") + 2;
  return settings.endpoint.substr(0, scheme_end) + location.bucket + "." + settings.endpoint.substr(scheme_end);
}

std::string s3_object_url(const S3Settings& settings, const S3Location& location, const std::string& key) {
  return s3_bucket_url(settings, location) + "/" + s3_uri_encode(key, true);
}

}  // namespace archbuild
