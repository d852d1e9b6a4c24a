#include "core/check_verdict.h"

namespace archbuild {

std::string verdict_word(CheckVerdict verdict) {
  switch (verdict) {
    case CheckVerdict::ok: return "ok";
    case CheckVerdict::warn: return "warn";
    case CheckVerdict::fail: return "FAIL";
    case CheckVerdict::skip: return "skip";
  }
  return "?";
}

}  // namespace archbuild
