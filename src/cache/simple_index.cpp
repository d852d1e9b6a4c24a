#include "cache/simple_index.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "core/error.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

std::string normalize_project_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

namespace {

std::string href_escape(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("-._~/").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      char buffer[4];
      std::snprintf(buffer, sizeof buffer, "%%%02X", c);
      out += buffer;
    }
  }
  return out;
}

void write_atomically(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  auto temporary = path.parent_path() / (".tmp-" + path.filename().string() + "-" + std::to_string(getpid()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) fail_environment("cannot write " + temporary.string());
  }
  std::filesystem::rename(temporary, path);
}

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>" +
         markup_escape(title) + "</title></head>\n<body>\n" + body + "</body>\n</html>\n";
}

}  // namespace

std::vector<IndexedWheel> write_simple_index(const std::filesystem::path& wheels_dir,
                                             const std::filesystem::path& index_dir,
                                             const std::function<bool(const std::string& file_name)>& include) {
  std::error_code ec;
  if (!std::filesystem::is_directory(wheels_dir, ec)) fail_bad_input(wheels_dir.string() + " is not a directory");
  std::vector<IndexedWheel> wheels;
  for (const auto& entry : std::filesystem::directory_iterator(wheels_dir)) {
    if (entry.path().extension() != ".whl" || !entry.is_regular_file()) continue;
    if (include && !include(entry.path().filename().string())) continue;
    auto name = WheelName::parse(entry.path().filename().string());
    if (!name) fail_bad_input(entry.path().string() + ": not a wheel file name (PEP 427)");
    wheels.push_back({normalize_project_name(name->name), entry.path(), sha256_file_hex(entry.path())});
  }
  std::sort(wheels.begin(), wheels.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  std::map<std::string, std::string> links;  // project -> <a> lines
  for (const auto& wheel : wheels) {
    auto relative = std::filesystem::relative(wheel.file, index_dir / wheel.project);
    links[wheel.project] += "<a href=\"" + href_escape(relative.string()) + "#sha256=" + wheel.sha256 + "\">" +
                            markup_escape(wheel.file.filename().string()) + "</a><br>\n";
  }
  std::string root;
  for (const auto& [project, lines] : links) {
    write_atomically(index_dir / project / "index.html",
                     page("Links for " + project, "<h1>Links for " + markup_escape(project) + "</h1>\n" + lines));
    root += "<a href=\"" + href_escape(project) + "/\">" + markup_escape(project) + "</a><br>\n";
  }
  write_atomically(index_dir / "index.html", page("Simple index", root));
  for (const auto& dir : std::filesystem::directory_iterator(index_dir, ec))
    if (dir.is_directory(ec) && !links.count(dir.path().filename().string()) &&
        std::filesystem::exists(dir.path() / "index.html", ec))
      std::filesystem::remove_all(dir.path(), ec);
  return wheels;
}

}  // namespace archbuild
