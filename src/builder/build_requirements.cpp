#include "builder/build_requirements.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cache/simple_index.h"
#include "config/toml_file.h"
#include "core/data_dir.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/layered_venv.h"
#include "process/run_process.h"

namespace archbuild {

namespace {

constexpr uint64_t kMaxRequirementsBytes = 1u << 20;

std::string quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : " ") + shell_quote(word);
  return out;
}

void from_pyproject(const std::filesystem::path& file, const std::string& shown, std::vector<std::string>& out) {
  toml::table root;
  try {
    root = parse_toml_file(file);
  } catch (const toml::parse_error& error) {
    fail_bad_input(shown + ":" + std::to_string(error.source().begin.line) + ": " + std::string(error.description()));
  }
  const auto* requires_list = root["build-system"]["requires"].as_array();
  if (!requires_list) return;
  for (const auto& item : *requires_list)
    if (auto value = item.value<std::string>())
      out.push_back(*value);
    else
      fail_bad_input(shown + ": [build-system] requires holds a value that is not a string");
}

}  // namespace

void read_requirements_file(const std::filesystem::path& file, const std::string& shown, std::vector<std::string>& out,
                            std::vector<std::string>& notes, const std::string& role) {
  std::string text;
  if (auto why = read_regular_file(file, kMaxRequirementsBytes, text); !why.empty())
    fail_bad_input(shown + (role.empty() ? "" : " (" + role + ")") + " " + why);
  std::istringstream lines(text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    // pip's rule: a comment starts a line or follows white space (a URL's #sha256= is no comment)
    for (size_t hash = line.find('#'); hash != std::string::npos; hash = line.find('#', hash + 1))
      if (hash == 0 || std::isspace(static_cast<unsigned char>(line[hash - 1]))) {
        line.erase(hash);
        break;
      }
    line = trim(line);
    if (line.empty()) continue;
    if (line.front() == '-') {
      notes.push_back(shown + ":" + std::to_string(number) + ": '" + line + "' is a pip option, not followed");
      continue;
    }
    out.push_back(line);
  }
}

std::string requirement_name(const std::string& requirement) {
  auto end = requirement.find_first_of("<>=!~;[( @");
  return normalize_project_name(trim(requirement.substr(0, end)));
}

std::vector<std::string> collect_build_requirements(const BuildStep& build, const std::filesystem::path& source_dir,
                                                    const std::vector<std::string>& provided,
                                                    std::vector<std::string>& notes) {
  std::vector<std::string> found = build.requires_list;
  for (const auto& relative : build.requires_from) {
    const auto file = source_dir / relative;
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
      notes.push_back(relative + ": not in this ref's tree, no requirements taken from it");
      continue;
    }
    // The tree is the project's: a link out of it is not its requirements.
    const auto real = std::filesystem::weakly_canonical(file, ec);
    const auto inside = real.lexically_relative(std::filesystem::weakly_canonical(source_dir, ec));
    if (ec || inside.empty() || *inside.begin() == "..")
      fail_bad_input(relative + " (build.requires_from) leads out of the work tree " + source_dir.string());
    if (std::filesystem::path(relative).filename() == "pyproject.toml")
      from_pyproject(file, relative, found);
    else
      read_requirements_file(file, relative, found, notes, "build.requires_from");
  }
  std::vector<std::string> kept;
  for (const auto& requirement : found) {
    const auto name = requirement_name(requirement);
    if (std::any_of(provided.begin(), provided.end(),
                    [&](const std::string& dependency) { return normalize_project_name(dependency) == name; }))
      continue;  // the dependency env's
    if (std::find(kept.begin(), kept.end(), requirement) == kept.end()) kept.push_back(requirement);
  }
  return kept;
}

std::vector<RequirementStatus> probe_build_requirements(const std::string& python,
                                                        const std::vector<std::string>& requirements) {
  std::vector<std::string> argv = {python, (data_dir() / "recipes" / "frontends" / "build_requirements.py").string()};
  argv.insert(argv.end(), requirements.begin(), requirements.end());
  auto probe = run_process(argv);
  auto last_line = [](const std::string& text) {
    auto lines = split_any(text, "\n");
    return lines.empty() ? std::string() : lines.back();
  };
  if (!probe.status.signaled && probe.status.code == 2) fail_bad_input("build requirements: " + last_line(probe.err));
  auto json = nlohmann::json::parse(probe.out, nullptr, false);
  if (!probe.succeeded() || !json.is_object() || !json.contains("requirements"))
    fail_environment(python + " could not check the build requirements (" +
                     (probe.err.empty() ? probe.describe_status() : last_line(probe.err)) + ")");
  std::vector<RequirementStatus> status;
  for (const auto& item : json["requirements"]) {
    RequirementStatus one;
    one.requirement = item.value("requirement", "");
    one.name = item.value("name", "");
    one.applies = item.value("applies", true);
    if (item.contains("installed") && item["installed"].is_string()) one.installed = item["installed"];
    one.satisfied = item.value("satisfied", false);
    status.push_back(std::move(one));
  }
  return status;
}

BuildRequirementsEnv ensure_build_requirements(const std::string& python, const std::filesystem::path& env_dir,
                                               const std::vector<std::string>& requirements, bool offline) {
  BuildRequirementsEnv env;
  env.python = python;
  env.status = probe_build_requirements(python, requirements);
  auto unmet = [](const std::vector<RequirementStatus>& status, bool with_version) {
    std::vector<std::string> out;
    for (const auto& one : status)
      if (!one.satisfied)
        out.push_back(one.requirement + (with_version && one.installed ? " (" + *one.installed + " installed)" : ""));
    return out;
  };
  if (!unmet(env.status, false).empty()) {
    const auto wanted = unmet(env.status, false);
    const std::string venv_python = (env_dir / "bin" / "python").string();
    // The venv is this interpreter's, for this list: a changed or upgraded
    // interpreter (its real file, its size and time) makes a new one.
    std::error_code ec;
    const auto real = std::filesystem::weakly_canonical(python, ec);
    const auto size = std::filesystem::file_size(real, ec);
    const auto time = std::filesystem::last_write_time(real, ec).time_since_epoch().count();
    const std::string stamp = python + "\n" + real.string() + " " + std::to_string(size) + " " + std::to_string(time) +
                              "\n" + join(requirements, "\n") + "\n";
    const auto stamp_path = env_dir / "archbuild-requirements.txt";
    std::string recorded;
    read_regular_file(stamp_path, kMaxRequirementsBytes, recorded);
    const bool reusable = recorded == stamp && std::filesystem::exists(venv_python, ec);
    if (reusable) env.status = probe_build_requirements(venv_python, requirements);
    if (!reusable || !unmet(env.status, false).empty()) {
      if (offline)
        fail_environment("the build needs " + join(unmet(probe_build_requirements(python, requirements), true), ", ") +
                         ", which " + python + " does not have, and --offline installs nothing: install them first (" +
                         shell_quote(python) + " -m pip install " + quoted(wanted) + "), or build without --offline");
      std::filesystem::remove_all(env_dir, ec);
      make_layered_venv(python, env_dir);
      std::vector<std::string> argv = {
          venv_python, "-m", "pip", "install", "--disable-pip-version-check", "--no-warn-script-location"};
      argv.insert(argv.end(), wanted.begin(), wanted.end());
      auto installed = run_process(argv);
      if (!installed.succeeded()) {
        auto lines = split_any(installed.err, "\n");
        const std::string last = lines.empty() ? installed.describe_status() : lines.back();
        // No index reachable (an air-gapped builder): say how to give pip the wheels.
        const bool not_found = last.find("No matching distribution") != std::string::npos;
        fail_environment("pip could not install the build requirements " + join(wanted, ", ") + " into " +
                         env_dir.string() + ": " + secrets::scrub(last) +
                         (not_found ? " (without an index: put their wheels in a directory and set "
                                      "PIP_FIND_LINKS=DIR PIP_NO_INDEX=1, or install them into the interpreter)"
                                    : ""));
      }
      write_file_atomically(stamp_path, stamp);
      env.installed_now = wanted;
      env.status = probe_build_requirements(venv_python, requirements);
    }
    env.python = venv_python;
    if (auto still = unmet(env.status, true); !still.empty())
      fail_environment("the build requirements " + join(still, ", ") + " are still not met in " + env_dir.string() +
                       " after pip installed them (a marker or a pin pip resolved otherwise?)");
  }
  std::vector<std::string> shown;
  for (const auto& one : env.status)
    if (one.applies && one.installed) {
      env.versions[one.name] = *one.installed;
      shown.push_back(one.name + " " + *one.installed);
    }
  env.description = "build requirements: " + join(shown, ", ") +
                    (env.installed_now.empty()
                         ? ""
                         : " (installed " + join(env.installed_now, ", ") + " into " + env_dir.string() + ")");
  return env;
}

}  // namespace archbuild
