#include "cli/push_output.h"

#include <iostream>

namespace archbuild {

nlohmann::json push_outcome_json(const PushOutcome& outcome) {
  return {{"pushed", outcome.pushed},
          {"already_there", outcome.present},
          {"repaired", outcome.repaired},
          {"repairs", outcome.repairs},
          {"gone_from_source", outcome.gone_from_source},
          {"not_pushed", outcome.not_pushed}};
}

std::string print_push_outcome(const PushOutcome& outcome, const std::filesystem::path& source,
                               const std::string& copied_again) {
  for (const auto& hash : outcome.pushed) std::cout << "pushed  " << hash.substr(0, 12) << "\n";
  for (const auto& line : outcome.repairs) std::cout << "repaired " << line << " (" << copied_again << ")\n";
  for (const auto& hash : outcome.gone_from_source)
    std::cout << "skipped " << hash.substr(0, 12) << ": removed from " << source.string()
              << " while pushing (cache gc)\n";
  for (const auto& line : outcome.not_pushed) std::cout << "NOT pushed " << line << "\n";
  return std::to_string(outcome.pushed.size()) + " pushed, " + std::to_string(outcome.present.size()) +
         " already there, " + std::to_string(outcome.repaired.size()) + " repaired, " +
         std::to_string(outcome.gone_from_source.size()) + " gone from the source, " +
         std::to_string(outcome.not_pushed.size()) + " not pushed";
}

ExitCode push_exit_code(const PushOutcome& outcome, const std::string& destination) {
  if (outcome.not_pushed.empty()) return ExitCode::success;
  std::cerr << "archbuild: error: " << outcome.not_pushed.size()
            << " problem(s) in the source cache kept entries out of " << destination
            << " (see `archbuild cache verify`)\n";
  return ExitCode::work_failed;
}

}  // namespace archbuild
