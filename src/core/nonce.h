#pragma once

#include <string>

namespace archbuild {

// 16 hex digits from the system's random source: a name or value no other
// process (another container with the same host name and pid included)
// picks at the same time. Not a secret: core/secrets draws those.
std::string random_nonce();

}  // namespace archbuild
