#include "cluster/cluster_setting.h"

#include <regex>

#include "config/setting_names.h"
#include "core/error.h"
#include "core/user_path.h"

namespace archbuild {

ClusterSetting resolve_cluster_setting(const Settings& settings) {
  ClusterSetting setting;
  const auto& url = settings.get(setting_name::compile_cluster);
  const auto& token = settings.get(setting_name::compile_cluster_token_file);
  if (url.value.empty()) {
    if (!token.value.empty())
      fail_bad_input("compile_cluster_token_file (from " + token.origin +
                     ") is set but compile_cluster is not: set the scheduler's URL too");
    return setting;
  }
  static const std::regex form(R"(https?://[A-Za-z0-9.\-]+(:[0-9]{1,5})?/?)");
  if (!std::regex_match(url.value, form))
    fail_bad_input("compile_cluster '" + url.value + "' (from " + url.origin +
                   "): expected the sccache-dist scheduler's URL, http://HOST[:PORT] or https://HOST[:PORT]");
  const auto& launcher = settings.get(setting_name::compiler_launcher);
  if (settings.compiler_launcher() != CompilerLauncher::sccache)
    fail_bad_input("compile_cluster (from " + url.origin +
                   ") needs compiler_launcher = sccache, which distributes "
                   "compiles; compiler_launcher is '" +
                   launcher.value + "' (from " + launcher.origin + ")");
  setting.scheduler_url = url.value;
  if (!token.value.empty())
    setting.token_file = checked_user_path(token.value, "compile_cluster_token_file (from " + token.origin + ")");
  return setting;
}

}  // namespace archbuild
