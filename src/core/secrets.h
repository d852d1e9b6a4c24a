#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

// The one owner of secrets: what is secret, and what archbuild may store or
// show in its place. Secret are the values of environment variables whose
// names hold TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, KEY or AUTH (any
// case) or that the user marked (`--secret-env NAME`), the userinfo of any
// URL ("https://USER:PASSWORD@host/"), and every value archbuild read from a
// credential source (a password from keyring or .pypirc, a token file, AWS
// keys), which the reader hands to remember().
//
// Two ways out, both from here:
//   - scrub(text): for what is printed or logged; URL userinfo becomes
//     "***" and every remembered value "<redacted>".
//   - recorded_value(name, value): for what is stored (key.txt, the
//     manifest, the report, the configure record, `plan`): a secret becomes
//     "<secret sha256:HEX>", an HMAC-SHA256 keyed by the cache's own secret
//     (CacheLayout::secret_key(), never pushed or shown). A changed secret still
//     changes the cache key; what is published cannot be turned back into
//     it, nor guessed by hashing candidates without that key.
//
// Process-wide, like the log: a value remembered by one part of archbuild
// is scrubbed from the lines every other part prints. Thread-safe.
namespace archbuild::secrets {

// Whether the value of the environment variable `name` is a secret.
bool is_secret_name(std::string_view name);
// `--secret-env NAME`: the value of NAME is a secret too.
void mark_secret_name(std::string_view name);

// A value known to be a secret: scrub() replaces it from now on. Values
// shorter than 4 characters are not remembered (they would scrub ordinary
// words); the URL and name rules still cover them.
void remember(std::string_view value);
// The userinfo of every URL in `text` (and its percent-decoded password).
void remember_url_userinfo(std::string_view text);

// `text` as it may be printed or logged.
std::string scrub(std::string_view text);

// The digests below are keyed by the cache's secret from here on; until
// then by a random key of this process (digests that match nothing stored).
// The secret is made when the cache has none, unless `make` is false (a
// `plan`, which writes nothing: its digests then match nothing stored).
void use_cache_secret(const std::filesystem::path& cache_dir, bool make = true);

// "<secret sha256:HEX>" for `value`.
std::string digest(std::string_view value);
// The value of the environment variable `name` as archbuild stores it:
// the digest when the name is secret; else with each URL's userinfo and
// each remembered value replaced by its digest.
std::string recorded_value(std::string_view name, std::string_view value);
std::map<std::string, std::string> recorded_env(const std::map<std::string, std::string>& env);

}  // namespace archbuild::secrets
