#include <iostream>

#include "cli/command.h"
#include "cli/common_options.h"
#include "cli/json_output.h"
#include "config/settings.h"
#include "core/secrets.h"
#include "ui/terminal.h"

namespace archbuild {

Command config_command() {
  return {
      "config", "Show every setting, its value and where it came from", [](CLI::App& app) {
        auto json = std::make_shared<bool>(false);
        add_json_flag(app, *json, "Print JSON");
        return [json]() {
          auto settings = Settings::load();
          if (*json) {
            auto rows = nlohmann::json::array();
            for (const auto& value : settings.all())
              rows.push_back({{"key", value.key}, {"value", secrets::scrub(value.value)}, {"origin", value.origin}});
            auto mirrors = nlohmann::json::array();
            for (const auto& rule : settings.file().mirrors)
              mirrors.push_back({{"from", secrets::scrub(rule.from)}, {"to", secrets::scrub(rule.to)}});
            print_json({{"config_file", settings.file().file ? settings.file().file->string() : ""},
                        {"settings", rows},
                        {"mirrors", mirrors}});
            std::cout.flush();
            settings.check();
            return ExitCode::success;
          }
          std::cout << "config file: " << (settings.file().file ? settings.file().file->string() : "(none)") << "\n";
          for (const auto& value : settings.all()) {
            const SettingSpec* spec = find_setting(value.key);
            std::string key = value.key;
            key.resize(18, ' ');
            std::string shown = secrets::scrub(value.value);
            shown.resize(std::max<size_t>(shown.size(), 34), ' ');
            std::cout << paint(key, Style::bold) << shown << "  " << paint(value.origin, Style::dim) << "\n"
                      << "                  " << spec->description << " (" << spec->env << ", " << spec->flag << ")\n";
          }
          for (const auto& rule : settings.file().mirrors)
            std::cout << paint("mirror", Style::bold) << "            " << secrets::scrub(rule.from) << " -> "
                      << secrets::scrub(rule.to) << "\n";
          std::cout.flush();
          settings.check();  // shown first, then a value no command would take is an error (exit 2)
          return ExitCode::success;
        };
      }};
}

}  // namespace archbuild
