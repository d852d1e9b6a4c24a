#include "cache/simple_index.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "core/cache_layout.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

namespace {

std::string href_escape(const std::string& path) { return percent_encode(path, "/"); }

// A link as written by another tool may hold a bad escape: read as it stands.
std::string href_unescape(const std::string& href) { return percent_decode(href).value_or(href); }

constexpr std::string_view kPageHead =
    "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>";
constexpr std::string_view kMarkerFormat = "archbuild simple index 1";
constexpr const char* kRootTitle = "Simple index";

std::string project_title(const std::string& project) { return "Links for " + project; }

void write_atomically(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  auto temporary = path.parent_path() / (std::string(CacheLayout::kTemporaryPrefix) + path.filename().string() + "-" +
                                         std::to_string(getpid()));
  try {
    write_whole_file(temporary, content);  // checked to the close: a full disk never renames a short page in
    std::filesystem::rename(temporary, path);
  } catch (const std::filesystem::filesystem_error& error) {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    fail_writing(error, path.parent_path());
  }
}

std::string page(const std::string& title, const std::string& body) {
  return std::string(kPageHead) + markup_escape(title) + "</title></head>\n<body>\n" + body + "</body>\n</html>\n";
}

std::string link_line(const std::string& href, const std::string& sha256, const std::string& file_name) {
  return "<a href=\"" + href_escape(href) + "#sha256=" + sha256 + "\">" + markup_escape(file_name) + "</a><br>\n";
}

std::string project_page(const std::string& project, const std::string& lines) {
  return page(project_title(project), "<h1>Links for " + markup_escape(project) + "</h1>\n" + lines);
}

std::string root_page(const std::set<std::string>& projects) {
  std::string root;
  for (const auto& name : projects)
    root += "<a href=\"" + href_escape(name) + "/\">" + markup_escape(name) + "</a><br>\n";
  return page(kRootTitle, root);
}

bool is_temporary(const std::filesystem::directory_entry& entry) {
  std::error_code ec;
  return entry.path().filename().string().rfind(CacheLayout::kTemporaryPrefix, 0) == 0 && entry.is_regular_file(ec) &&
         !entry.is_symlink(ec);
}

// A page this code writes, found by its exact head (not a symbolic link).
bool is_own_page(const std::filesystem::path& file, const std::string& title) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(file, ec))) return false;
  const auto head = std::string(kPageHead) + markup_escape(title) + "</title>";
  std::ifstream in(file, std::ios::binary);
  std::string start(head.size(), '\0');
  in.read(start.data(), static_cast<std::streamsize>(start.size()));
  return in && start == head;
}

// An older archbuild's project dir: its page and nothing else of anyone's.
bool is_own_project_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  bool page_found = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (is_temporary(entry)) continue;
    if (entry.path().filename() != "index.html" || !is_own_page(entry.path(), project_title(dir.filename().string())))
      return false;
    page_found = true;
  }
  return !ec && page_found;
}

[[noreturn]] void refuse(const std::filesystem::path& index_dir, const std::string& why) {
  fail_bad_input("refusing to write a simple index into " + index_dir.string() + ": " + why +
                 "; give an empty or new directory (archbuild writes only into index dirs it made, which carry its " +
                 kIndexMarker + " file)");
}

struct OwnedIndex {
  bool marked = false;
  std::set<std::string> projects;  // project dirs archbuild wrote there
};

// Reads the marker into `owned`; false when there is none.
bool read_marker(const std::filesystem::path& index_dir, OwnedIndex& owned) {
  std::error_code ec;
  auto marker = index_dir / kIndexMarker;
  auto status = std::filesystem::symlink_status(marker, ec);
  if (!std::filesystem::exists(status)) return false;
  if (!std::filesystem::is_regular_file(status))
    refuse(index_dir, marker.string() + " is not a regular file archbuild wrote");
  std::ifstream in(marker);
  std::string line;
  if (!std::getline(in, line) || line != kMarkerFormat)
    refuse(index_dir, marker.string() + " does not start with '" + std::string(kMarkerFormat) + "'");
  while (std::getline(in, line))
    if (line.rfind("project ", 0) == 0) owned.projects.insert(line.substr(8));
  owned.marked = true;
  return true;
}

OwnedIndex own_index_dir(const std::filesystem::path& index_dir, bool marker_checked_again = false) {
  std::error_code ec;
  OwnedIndex owned;
  auto status = std::filesystem::status(index_dir, ec);
  if (!std::filesystem::exists(status)) return owned;
  if (!std::filesystem::is_directory(status)) fail_bad_input(index_dir.string() + " is not a directory");
  read_marker(index_dir, owned);
  for (const auto& entry : std::filesystem::directory_iterator(index_dir)) {
    const auto name = entry.path().filename().string();
    if (entry.is_symlink(ec)) refuse(index_dir, entry.path().string() + " is a symbolic link");
    if (owned.marked || name == kIndexMarker || is_temporary(entry)) continue;
    if (name == "index.html" && is_own_page(entry.path(), kRootTitle)) continue;
    if (entry.is_directory(ec) && is_own_project_dir(entry.path())) {
      owned.projects.insert(name);
      continue;
    }
    // A writer claiming the dir meanwhile wrote its marker before this half-written page.
    OwnedIndex now;
    if (!marker_checked_again && read_marker(index_dir, now)) return own_index_dir(index_dir, true);
    refuse(index_dir, "it holds " + entry.path().string() + ", which archbuild did not write, and no " + kIndexMarker);
  }
  return owned;
}

void write_marker(const std::filesystem::path& index_dir, const std::set<std::string>& projects) {
  std::string text = std::string(kMarkerFormat) + "\n";
  for (const auto& project : projects) text += "project " + project + "\n";
  write_atomically(index_dir / kIndexMarker, text);
}

// Only the page and the temporary files archbuild writes; the dir goes when
// that leaves it empty. True when the dir is gone.
bool remove_project_page(const std::filesystem::path& dir) {
  std::error_code ec;
  auto status = std::filesystem::symlink_status(dir, ec);
  if (!std::filesystem::exists(status)) return true;
  if (!std::filesystem::is_directory(status)) return false;
  auto page_status = std::filesystem::symlink_status(dir / "index.html", ec);
  if (std::filesystem::is_regular_file(page_status) || std::filesystem::is_symlink(page_status))
    std::filesystem::remove(dir / "index.html", ec);
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (is_temporary(entry)) std::filesystem::remove(entry.path(), ec);
  std::filesystem::remove(dir, ec);  // fails, and keeps the dir, when something else is in it
  return !std::filesystem::exists(std::filesystem::symlink_status(dir, ec));
}

}  // namespace

void check_index_dir(const std::filesystem::path& index_dir) { own_index_dir(index_dir); }

namespace {
// The wheel file names one of archbuild's project pages links: one linear
// scan over the <a href="...#sha256=..."> lines it writes.
void page_wheel_names(const std::filesystem::path& index_dir, const std::string& project,
                      std::set<std::string>& names) {
  constexpr std::string_view kLink = "<a href=\"";
  constexpr uintmax_t kMaxPageBytes = 16u << 20;  // far above any page archbuild writes
  auto file = index_dir / project / "index.html";
  std::error_code ec;
  if (!is_own_page(file, project_title(project)) || std::filesystem::file_size(file, ec) > kMaxPageBytes) return;
  std::string body;
  if (!read_regular_file(file, kMaxPageBytes, body).empty()) return;
  for (size_t at = body.find(kLink); at != std::string::npos; at = body.find(kLink, at)) {
    at += kLink.size();
    auto end = body.find_first_of("#\"", at);
    if (end == std::string::npos) break;
    if (body[end] == '#')
      names.insert(std::filesystem::path(href_unescape(body.substr(at, end - at))).filename().string());
    at = end;
  }
}
}  // namespace

std::set<std::string> linked_wheel_names(const std::filesystem::path& index_dir) {
  std::set<std::string> names;
  for (const auto& project : own_index_dir(index_dir).projects) page_wheel_names(index_dir, project, names);
  return names;
}

std::vector<IndexedWheel> write_simple_index(const std::filesystem::path& wheels_dir,
                                             const std::filesystem::path& index_dir,
                                             const std::function<bool(const std::string& file_name)>& include) {
  std::error_code ec;
  if (!std::filesystem::is_directory(wheels_dir, ec)) fail_bad_input(wheels_dir.string() + " is not a directory");
  // Every refusal comes before the first write, so a refused dir is left as it was.
  auto owned = own_index_dir(index_dir);
  std::vector<IndexedWheel> wheels;
  for (const auto& entry : std::filesystem::directory_iterator(wheels_dir)) {
    const auto file = entry.path().filename().string();
    const bool variants_file = file.ends_with(kVariantsSuffix) && file.find('-') < file.size();
    if ((entry.path().extension() != ".whl" && !variants_file) || !entry.is_regular_file()) continue;
    if (include && !include(file)) continue;
    if (variants_file) {  // {name}-{version}-variants.json, linked beside that version's variant wheels
      wheels.push_back(
          {normalize_project_name(file.substr(0, file.find('-'))), entry.path(), sha256_file_hex(entry.path())});
      continue;
    }
    auto name = WheelName::parse(file);
    if (!name) fail_bad_input(entry.path().string() + ": not a wheel file name (PEP 427)");
    wheels.push_back({normalize_project_name(name->name), entry.path(), sha256_file_hex(entry.path())});
  }
  std::sort(wheels.begin(), wheels.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  std::map<std::string, std::string> links;  // project -> <a> lines
  for (const auto& wheel : wheels) {
    auto relative = std::filesystem::relative(wheel.file, index_dir / wheel.project);
    links[wheel.project] += link_line(relative.string(), wheel.sha256, wheel.file.filename().string());
  }

  for (const auto& [project, lines] : links)
    if (!owned.projects.count(project) &&
        std::filesystem::exists(std::filesystem::symlink_status(index_dir / project, ec)))
      refuse(index_dir, (index_dir / project).string() + " is not a project page archbuild wrote");

  // The marker names every page before it exists and after it is gone, so a
  // killed run never leaves a page of archbuild's that the marker does not name.
  auto recorded = owned.projects;
  for (const auto& [project, lines] : links) recorded.insert(project);
  std::filesystem::create_directories(index_dir);
  if (!owned.marked || recorded != owned.projects) write_marker(index_dir, recorded);

  std::set<std::string> listed;
  for (const auto& [project, lines] : links) {
    write_atomically(index_dir / project / "index.html", project_page(project, lines));
    listed.insert(project);
  }
  write_atomically(index_dir / "index.html", root_page(listed));

  // Pages of projects without a wheel go only now that the root page stops naming them.
  auto kept = recorded;
  for (const auto& project : recorded)
    if (!links.count(project) && remove_project_page(index_dir / project)) kept.erase(project);
  if (kept != recorded) write_marker(index_dir, kept);
  return wheels;
}

bool update_project_page(const std::filesystem::path& index_dir, const std::string& project,
                         const std::vector<IndexedWheel>& added, const std::set<std::string>& dropped) {
  OwnedIndex owned;
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(index_dir, ec)) || !read_marker(index_dir, owned))
    return false;
  const auto dir = index_dir / project;
  const auto page_file = dir / "index.html";
  std::map<std::string, std::string> lines;  // file name -> its <a> line, sorted as write_simple_index sorts
  const bool known = owned.projects.count(project) > 0;
  if (known) {
    constexpr uintmax_t kMaxPageBytes = 16u << 20;
    if (!is_own_page(page_file, project_title(project)) || std::filesystem::file_size(page_file, ec) > kMaxPageBytes)
      return false;
    std::ifstream in(page_file, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("<a href=\"", 0) != 0) continue;
      auto end = line.find_first_of("#\"", 9);
      if (end == std::string::npos) return false;
      lines[std::filesystem::path(href_unescape(line.substr(9, end - 9))).filename().string()] = line + "\n";
    }
  } else if (std::filesystem::exists(std::filesystem::symlink_status(dir, ec))) {
    return false;  // someone else's dir of that name
  }
  for (const auto& name : dropped) lines.erase(name);
  for (const auto& wheel : added) {
    auto relative = std::filesystem::relative(wheel.file, dir);
    lines[wheel.file.filename().string()] = link_line(relative.string(), wheel.sha256, wheel.file.filename().string());
  }
  if (lines.empty()) return false;
  if (!known) {
    // The marker names the page before it exists (a kill leaves nothing unrecorded).
    auto recorded = owned.projects;
    recorded.insert(project);
    write_marker(index_dir, recorded);
  }
  std::string body;
  for (const auto& [name, line] : lines) body += line;
  write_atomically(page_file, project_page(project, body));
  if (!known) {
    auto recorded = owned.projects;
    recorded.insert(project);
    write_atomically(index_dir / "index.html", root_page(recorded));
  }
  return true;
}

std::string project_page_html(const std::string& project, const std::vector<PageLink>& links) {
  std::map<std::string, std::string> lines;  // sorted by file name, as the local pages are
  for (const auto& link : links) lines[link.file_name] = link_line(link.href, link.sha256, link.file_name);
  std::string body;
  for (const auto& [name, line] : lines) body += line;
  return project_page(project, body);
}

std::string root_page_html(const std::set<std::string>& projects) { return root_page(projects); }

}  // namespace archbuild
