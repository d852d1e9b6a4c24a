#pragma once

#include <string>

#include "cache/cache_key.h"
#include "core/sha256.h"

namespace archbuild {

// A cache key whose text is `text` (and whose hash is that text's sha256).
inline CacheKey key_of(const std::string& text) { return {text, sha256_hex(text)}; }

}  // namespace archbuild
