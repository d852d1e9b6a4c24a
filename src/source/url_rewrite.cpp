#include "source/url_rewrite.h"

#include "core/error.h"
#include "core/log.h"

namespace archbuild {

void UrlRewriter::add_option(const std::string& text) {
  auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
    fail_bad_input("--mirror '" + text + "': expected FROM=TO, e.g. https://github.com/=file:///srv/mirrors/");
  rules_.push_back({text.substr(0, equals), text.substr(equals + 1)});
}

std::string UrlRewriter::apply(const std::string& url) const {
  const UrlRewrite* best = nullptr;
  for (const auto& rule : rules_)
    if (url.rfind(rule.from, 0) == 0 && (!best || rule.from.size() > best->from.size())) best = &rule;
  if (!best) return url;
  std::string rewritten = best->to + url.substr(best->from.size());
  log::verbose("mirror rule {} = {}: {} -> {}", best->from, best->to, url, rewritten);
  return rewritten;
}

std::string resolve_submodule_url(const std::string& parent_url, const std::string& url) {
  if (url.rfind("./", 0) != 0 && url.rfind("../", 0) != 0) return url;
  std::string base = parent_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::string rest = url;
  while (true) {
    if (rest.rfind("./", 0) == 0) {
      rest.erase(0, 2);
    } else if (rest.rfind("../", 0) == 0) {
      rest.erase(0, 3);
      auto slash = base.find_last_of("/:");
      if (slash == std::string::npos) fail_bad_input("submodule URL '" + url + "' climbs above '" + parent_url + "'");
      bool colon = base[slash] == ':';
      base.erase(slash);
      if (colon) {  // scp-like host:path
        base += ":";
        return base + rest;
      }
    } else {
      break;
    }
  }
  return base + "/" + rest;
}

}  // namespace archbuild
