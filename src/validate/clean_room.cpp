#include "validate/clean_room.h"

#include <algorithm>
#include <chrono>

#include "core/data_dir.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/regular_file.h"
#include "core/secrets.h"
#include "core/strings.h"
#include "process/layered_venv.h"
#include "process/run_process.h"
#include "validate/device_validation.h"
#include "validate/project_tests.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {
// The last line of a child's output that says something.
std::string last_words(const ProcessResult& result) {
  return secrets::scrub(last_lines(result.err.empty() ? result.out : result.err, 3));
}
}  // namespace

CleanRoomLayout CleanRoomLayout::from_json(const std::string& answer) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(answer);
  } catch (const nlohmann::json::exception& error) {
    fail_environment(std::string("the clean room's layout is not JSON: ") + error.what());
  }
  if (!json.is_object() || !json.contains("binds") || !json["binds"].is_array())
    fail_environment("the clean room's layout has no list of binds");
  CleanRoomLayout layout;
  layout.python = json_string(json, "python");
  layout.lib_dir = json_string(json, "lib_dir");
  if (layout.python.empty() || layout.lib_dir.empty()) fail_environment("the clean room's layout names no python");
  for (const auto& bind : json["binds"]) {
    if (!bind.is_array() || bind.size() != 2 || !bind[0].is_string() || !bind[1].is_string())
      fail_environment("the clean room's layout has a bind that is not [SOURCE, DEST]");
    layout.binds.emplace_back(bind[0].get<std::string>(), bind[1].get<std::string>());
  }
  for (const auto& device : json_strings(json, "devices")) layout.devices.emplace_back(device);
  layout.missing_system = json_strings(json, "missing_system");
  return layout;
}

std::vector<std::string> bubblewrap_argv(const std::filesystem::path& bwrap, const CleanRoomLayout& layout,
                                         const std::vector<std::pair<std::string, std::string>>& env,
                                         const std::vector<std::string>& command) {
  std::vector<std::string> argv = {bwrap.string(),
                                   "--unshare-all",
                                   "--die-with-parent",
                                   "--new-session",
                                   "--clearenv",
                                   "--setenv",
                                   "PATH",
                                   "/usr/bin:/bin",
                                   "--setenv",
                                   "HOME",
                                   "/tmp",
                                   "--setenv",
                                   "LD_LIBRARY_PATH",
                                   layout.lib_dir.string()};
  for (const auto& [name, value] : env) argv.insert(argv.end(), {"--setenv", name, value});
  // /tmp before the binds: a bind below /tmp (a work dir there) shows through it.
  argv.insert(argv.end(), {"--tmpfs", "/", "--tmpfs", "/tmp"});
  for (const auto& [source, dest] : layout.binds)
    argv.insert(argv.end(), {"--ro-bind", source.string(), dest.string()});
  for (const auto& [source, dest] : layout.writable)
    argv.insert(argv.end(), {"--bind", source.string(), dest.string()});
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev"});
  if (!layout.devices.empty()) argv.insert(argv.end(), {"--ro-bind", "/sys", "/sys"});
  for (const auto& device : layout.devices) argv.insert(argv.end(), {"--dev-bind", device.string(), device.string()});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::string CleanRoom::summary() const {
  if (!ran) return "skipped: " + skipped_reason;
  if (!failures.empty())
    return std::string(environment ? "NOT PROVEN (this machine's gap, not the wheel's)" : "FAILED") +
           " where only what a node has is: " + join(failures, "; ");
  const auto installed = dependencies.summary();
  return "loaded " + std::to_string(loaded) + " ELF file" + (loaded == 1 ? "" : "s") +
         (imported.empty() ? std::string() : " and imported " + join(imported, ", ")) +
         (kernel_test_ran ? ", kernel test passed," : "") + " with only the interpreter, " +
         (torch.empty() ? std::string("its") : "torch " + torch + " and its") +
         " dependency wheels and the manylinux policy's system libraries" +
         (installed.empty() ? std::string() : " (" + installed + ")");
}

nlohmann::json CleanRoom::to_json() const {
  return {{"ran", ran},
          {"environment", environment},
          {"ok", ok()},
          {"skipped_reason", skipped_reason},
          {"failures", failures},
          {"loaded", loaded},
          {"imported", imported},
          {"torch", torch},
          {"kernel_test_ran", kernel_test_ran},
          {"dependencies", dependencies.to_json()},
          {"seconds", seconds},
          {"log", log.string()},
          {"summary", summary()}};
}

CleanRoom run_clean_room(const CleanRoomRequest& request) {
  CleanRoom room;
  const auto started = std::chrono::steady_clock::now();
  const auto finish = [&]() -> CleanRoom {
    room.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return room;
  };
  const auto bwrap = find_on_path("bwrap");
  if (!bwrap) {
    room.skipped_reason = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap";
    return finish();
  }
  if (!request.audit || !request.audit->ran) {
    room.skipped_reason = "the wheel was not audited: nothing says what a node must give it";
    return finish();
  }
  const auto name = WheelName::parse(request.wheel.filename().string());
  if (!name) {
    room.skipped_reason = request.wheel.filename().string() + " is no wheel's name";
    return finish();
  }
  // Cleared below: only in a work dir that is validation's (the device checks share it).
  claim_validation_work_dir(request.work_dir);
  const auto dir = request.work_dir / kCleanRoomDir;
  room.log = dir / "clean-room.log";
  std::string log_text;
  // Past here it was tried: whatever stops it is a failure, not a skip.
  const auto not_set_up = [&](const std::string& why) {
    room.ran = true;
    room.environment = true;
    room.failures.push_back("the clean room could not be set up: " + why);
  };
  try {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto python = make_layered_venv(request.python, dir / "venv");
    ProcessOptions pip_options;
    pip_options.env_overrides["PIP_CONFIG_FILE"] = "/dev/null";
    pip_options.timeout = std::chrono::minutes(5);
    const auto installed = run_process({python, "-m", "pip", "install", "--no-deps", "--no-index", "--no-cache-dir",
                                        "--disable-pip-version-check", request.wheel.string()},
                                       pip_options);
    if (!installed.succeeded()) {
      room.ran = true;
      room.failures.push_back("the wheel does not install: " + last_words(installed));
      return finish();
    }
    // What pip brings on a node besides the wheel (detectron2's fvcore), from the given sources.
    room.dependencies = install_wheel_dependencies(python, name->name, request.dependencies, dir / "dependencies.log",
                                                   dir);
    // What a node has, as this machine has it.
    const auto frontend = data_dir() / "recipes" / "frontends" / "clean_room.py";
    std::vector<std::string> layout_argv = {python, frontend.string(), "layout"};
    for (const auto& soname : request.audit->system_libraries)
      layout_argv.insert(layout_argv.end(), {"--system", soname});
    for (const auto& file : request.audit->files)
      for (const auto& need : file.needs)
        if ((need.from == LibrarySource::torch || need.from == LibrarySource::cuda ||
             need.from == LibrarySource::driver) &&
            !need.path.empty())
          layout_argv.insert(layout_argv.end(), {"--dependency", need.soname + "=" + need.path});
    if (request.gpu) layout_argv.push_back("--gpu");
    ProcessOptions layout_options;
    layout_options.env_overrides["PYTHONPATH"] = request.tool_path.string();
    layout_options.env_overrides["PYTHONDONTWRITEBYTECODE"] = "1";
    layout_options.timeout = std::chrono::minutes(5);
    const auto made = run_process(layout_argv, layout_options);
    if (!made.succeeded()) {
      not_set_up("its layout could not be read: " + last_words(made));
      return finish();
    }
    auto layout = CleanRoomLayout::from_json(made.out);
    layout.binds.emplace_back(frontend.parent_path(), frontend.parent_path());
    // The probe's answer comes back through a file of its own, never its output.
    const auto answer_dir = dir / "answer";
    std::filesystem::create_directories(answer_dir);
    const std::filesystem::path inside_answer = "/run/archbuild-node/answer";
    layout.writable.emplace_back(answer_dir, inside_answer);
    std::vector<std::pair<std::string, std::string>> env = {{"PYTHONDONTWRITEBYTECODE", "1"},
                                                            {"PYTHONNOUSERSITE", "1"}};
    if (!request.visible_devices.empty()) env.emplace_back("CUDA_VISIBLE_DEVICES", request.visible_devices);
    std::vector<std::string> probe = {layout.python, frontend.string(), "probe",
                                      name->name,    "--result",        (inside_answer / "probe.json").string()};
    for (const auto& module : request.modules) probe.insert(probe.end(), {"--import", module});
    ProcessOptions inside;
    inside.timeout = std::chrono::minutes(5);
    const auto tried = run_process(bubblewrap_argv(*bwrap, layout, env, probe), inside);
    log_text += "$ clean_room.py probe " + name->name + "\n" + tried.out + tried.err;
    if (!tried.succeeded() && tried.err.rfind("bwrap:", 0) == 0) {
      // bubblewrap itself refused (no user namespaces in this container): nothing was tried.
      room.skipped_reason = "bubblewrap cannot make a sandbox here: " + last_words(tried);
      write_file_atomically(room.log, log_text);
      return finish();
    }
    room.ran = true;
    std::string answer_text;
    (void)read_regular_file(answer_dir / "probe.json", 16 << 20, answer_text);
    const auto answer = nlohmann::json::parse(answer_text, nullptr, /*allow_exceptions=*/false);
    if (!answer.is_object() || !answer.contains("loaded") || !answer["loaded"].is_array()) {
      // It died before it answered: while loading the wheel's code (a crash), or before.
      room.failures.push_back("the probe gave no answer (" + tried.describe_status() + "): " + last_words(tried));
      write_file_atomically(room.log, log_text);
      return finish();
    }
    if (answer.contains("torch_error") && answer["torch_error"].is_string()) {
      room.environment = true;  // this machine's torch does not import there: the wheel was not tried
      room.failures.push_back("torch itself does not import with only what a node has: " +
                              answer["torch_error"].get<std::string>());
      write_file_atomically(room.log, log_text);
      return finish();
    }
    room.torch = json_string(answer, "torch");
    room.loaded = answer["loaded"].size();
    room.imported = json_strings(answer, "imported");
    // An import that failed only for a module none of the wheel's own, while
    // a dependency it declares could not be installed, is this machine's gap.
    bool gap_only = room.dependencies.error.empty() && !room.dependencies.ok();
    for (const auto& key : {"failed", "import_failed"})
      for (const auto& item : answer.value(key, nlohmann::json::array()))
        if (item.is_array() && item.size() == 2 && item[0].is_string() && item[1].is_string()) {
          const auto message = item[1].get<std::string>();
          room.failures.push_back(item[0].get<std::string>() + ": " + message);
          const auto module = missing_module(message);
          gap_only = gap_only && std::string_view(key) == "import_failed" &&
                     message.starts_with("ModuleNotFoundError") && !module.empty() &&
                     std::find(request.modules.begin(), request.modules.end(), module) == request.modules.end();
        }
    if (gap_only && !room.failures.empty()) {
      room.environment = true;
      room.failures.push_back(room.dependencies.summary());
      write_file_atomically(room.log, log_text);
      return finish();
    }
    if (request.gpu && !request.kernel_test.empty() && room.failures.empty()) {
      layout.binds.emplace_back(request.kernel_test.parent_path(), request.kernel_test.parent_path());
      std::vector<std::string> test = {layout.python, request.kernel_test.string()};
      test.insert(test.end(), request.modules.begin(), request.modules.end());
      ProcessOptions gpu;
      gpu.timeout = std::chrono::minutes(10);
      const auto ran = run_process(bubblewrap_argv(*bwrap, layout, env, test), gpu);
      log_text += "$ " + request.kernel_test.filename().string() + "\n" + ran.out + ran.err;
      room.kernel_test_ran = ran.succeeded();
      if (!ran.succeeded()) room.failures.push_back("kernel test: " + last_words(ran));
    }
    write_file_atomically(room.log, log_text);
  } catch (const std::exception& error) {  // UserError (a venv, a process), filesystem_error
    not_set_up(secrets::scrub(error.what()));
  }
  return finish();
}

}  // namespace archbuild
