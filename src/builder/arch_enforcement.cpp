#include "builder/arch_enforcement.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "arch/nvcc_arch_flags.h"
#include "core/json_text.h"
#include "core/strings.h"

namespace archbuild {

namespace {

const char* output_of(const std::vector<std::string>& command) {
  for (size_t i = 0; i + 1 < command.size(); ++i)
    if (command[i] == "-o") return command[i + 1].c_str();
  return "";
}

void append_line(const char* log, const std::string& line) {
  int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  // One write with O_APPEND: lines of concurrent compiles never interleave.
  if (::write(fd, line.data(), line.size()) < 0) {
  }
  ::close(fd);
}

}  // namespace

std::vector<std::string> enforce_nvcc_command(const std::vector<std::string>& command, size_t nvcc_index) {
  const char* asked_text = std::getenv(kNvccTargetsVariable);
  auto asked = asked_text ? parse_nvcc_targets(asked_text) : std::nullopt;
  if (!asked || asked->empty()) return command;
  // nvcc adds these to every call: their target flags are judged with the command line's.
  const char* prepend = std::getenv("NVCC_PREPEND_FLAGS");
  const char* append = std::getenv("NVCC_APPEND_FLAGS");
  auto prepended = split_target_flags(prepend ? prepend : "");
  auto appended = split_target_flags(append ? append : "");
  std::vector<std::string> args = prepended.target_flags;
  args.insert(args.end(), command.begin() + static_cast<long>(nvcc_index) + 1, command.end());
  args.insert(args.end(), appended.target_flags.begin(), appended.target_flags.end());

  auto rewrite = enforce_nvcc_targets(args, *asked);
  std::vector<std::string> result = command;
  if (rewrite.kind == NvccRewrite::Kind::rewritten) {
    result.assign(command.begin(), command.begin() + static_cast<long>(nvcc_index) + 1);
    result.insert(result.end(), rewrite.args.begin(), rewrite.args.end());
    if (prepend) ::setenv("NVCC_PREPEND_FLAGS", prepended.rest.c_str(), 1);
    if (append) ::setenv("NVCC_APPEND_FLAGS", appended.rest.c_str(), 1);
  }
  // Calls that compile nothing (--version, -M, CMake's compiler checks) are not counted.
  const bool compiles_nothing = rewrite.kind == NvccRewrite::Kind::untouched && rewrite.before.empty();
  if (const char* log = std::getenv(kNvccLogVariable); log && *log && !compiles_nothing) {
    const char* kind = rewrite.kind == NvccRewrite::Kind::rewritten         ? "rewritten"
                       : rewrite.kind == NvccRewrite::Kind::left_as_written ? "left"
                                                                            : "untouched";
    nlohmann::json line = {{"kind", kind},
                           {"output", output_of(command)},
                           {"before", format_nvcc_targets(rewrite.before)},
                           {"after", format_nvcc_targets(rewrite.after)},
                           {"reason", rewrite.reason}};
    append_line(log, json_text(line, -1) + "\n");
  }
  return result;
}

nlohmann::json ArchEnforcement::to_json() const {
  auto list = nlohmann::json::array();
  for (const auto& change : changes)
    list.push_back(
        {{"output", change.output}, {"before", change.before}, {"after", change.after}, {"reason", change.reason}});
  return {{"enabled", enabled},
          {"nvcc_calls", calls},
          {"rewritten", rewritten},
          {"left_as_written", left},
          {"changes", list}};
}

std::string ArchEnforcement::summary() const {
  if (!enabled) return "off (the project's own arch flags were kept)";
  std::map<std::string, size_t> rewrites;
  for (const auto& change : changes)
    if (change.reason.empty()) ++rewrites[(change.before.empty() ? "(none)" : change.before) + " -> " + change.after];
  std::string text = std::to_string(calls) + " nvcc call" + (calls == 1 ? "" : "s") + ", " + std::to_string(rewritten) +
                     " rewritten";
  if (!rewrites.empty()) {
    std::vector<std::string> shown;
    for (const auto& [what, count] : rewrites)
      if (shown.size() < 3) shown.push_back(what);
    text += " (" + join(shown, "; ") + (rewrites.size() > 3 ? "; ..." : "") + ")";
  }
  if (left) text += ", " + std::to_string(left) + " left as the project wrote them";
  return text;
}

ArchEnforcement read_arch_enforcement(const std::filesystem::path& log, bool enabled) {
  ArchEnforcement enforcement;
  enforcement.enabled = enabled;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    auto entry = nlohmann::json::parse(line, nullptr, false);
    if (!entry.is_object()) continue;
    ++enforcement.calls;
    if (auto output = entry.value("output", ""); !output.empty()) enforcement.outputs.push_back(output);
    auto kind = entry.value("kind", "");
    if (kind == "untouched") continue;
    (kind == "rewritten" ? enforcement.rewritten : enforcement.left) += 1;
    if (enforcement.changes.size() < 200)
      enforcement.changes.push_back(
          {entry.value("output", ""), entry.value("before", ""), entry.value("after", ""), entry.value("reason", "")});
  }
  return enforcement;
}

}  // namespace archbuild
