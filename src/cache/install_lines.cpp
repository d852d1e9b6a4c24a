#include "cache/install_lines.h"

#include "core/strings.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {

std::string index_url(const std::filesystem::path& simple_dir) { return "file://" + simple_dir.string(); }

}  // namespace

std::vector<std::string> install_lines(const std::vector<std::filesystem::path>& wheels,
                                       const std::filesystem::path& simple_dir,
                                       const std::map<std::string, std::string>& pinned) {
  std::string requirements;
  for (const auto& wheel : wheels)
    if (auto name = WheelName::parse(wheel.filename().string()))
      requirements += shell_quote(name->name + "==" + name->version) + " ";
  if (requirements.empty()) return {};
  for (const auto& [name, version] : pinned) requirements += shell_quote(name + "==" + version) + " ";
  const auto url = shell_quote(index_url(simple_dir));
  return {"pip install " + requirements + "--extra-index-url " + url,
          "uv pip install " + requirements + "--index " + url};
}

std::string index_configuration(const std::filesystem::path& simple_dir) {
  return index_configuration_for_url(index_url(simple_dir));
}

std::string index_configuration_for_url(const std::string& url) {
  return "# pip: ~/.config/pip/pip.conf (or /etc/pip.conf for every user)\n"
         "[global]\n"
         "extra-index-url = " +
         url +
         "\n\n"
         "# uv: ~/.config/uv/uv.toml (or /etc/uv/uv.toml); indexes named here come before PyPI\n"
         "[[index]]\n"
         "name = \"archbuild\"\n"
         "url = \"" +
         url +
         "\"\n\n"
         "# Then pin the exact build: pip install \"torch==2.9.1+cu130.sm90\" (pip takes the highest\n"
         "# matching version of all its indexes: an unpinned name may come from PyPI).\n";
}

}  // namespace archbuild
