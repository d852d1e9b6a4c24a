#include "wheel/wheel_archive.h"

#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <openssl/evp.h>
#include <zip.h>

#include "core/error.h"
#include "core/strings.h"

namespace archbuild {

std::optional<WheelName> WheelName::parse(const std::string& filename) {
  if (filename.size() < 5 || filename.substr(filename.size() - 4) != ".whl") return std::nullopt;
  auto parts = split_any(filename.substr(0, filename.size() - 4), "-");
  if (parts.size() != 5 && parts.size() != 6) return std::nullopt;
  WheelName name;
  name.name = parts[0];
  name.version = parts[1];
  size_t i = 2;
  if (parts.size() == 6) name.build = parts[i++];
  name.python = parts[i++];
  name.abi = parts[i++];
  name.platform = parts[i];
  return name;
}

std::string record_digest(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  unsigned char encoded[128];
  int written = EVP_EncodeBlock(encoded, digest, static_cast<int>(length));
  std::string text(reinterpret_cast<char*>(encoded), static_cast<size_t>(written));
  for (auto& c : text) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!text.empty() && text.back() == '=') text.pop_back();
  return text;
}

std::string read_zip_member(zip_t* archive, int64_t index, const std::string& name) {
  zip_stat_t info;
  if (zip_stat_index(archive, index, 0, &info) != 0) fail_bad_input("cannot stat wheel member " + name);
  zip_file_t* file = zip_fopen_index(archive, index, 0);
  if (!file) fail_bad_input("cannot read wheel member " + name + ": " + zip_strerror(archive));
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> guard(file, zip_fclose);
  std::string bytes(info.size, '\0');
  if (info.size && zip_fread(file, bytes.data(), info.size) != static_cast<zip_int64_t>(info.size))
    fail_bad_input("wheel member " + name + " is truncated or corrupt");
  return bytes;
}

std::vector<std::string> record_row(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        fields.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        fields.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::string record_row_text(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto& field = fields[i];
    if (i) line += ',';
    if (field.find_first_of(",\"\n") == std::string::npos) {
      line += field;
      continue;
    }
    line += '"';
    for (char c : field) line += c == '"' ? std::string("\"\"") : std::string(1, c);
    line += '"';
  }
  return line;
}

std::string find_dist_info(zip_t* archive) {
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    std::string name = zip_get_name(archive, i, 0);
    auto slash = name.find('/');
    if (slash != std::string::npos && name.substr(slash) == "/RECORD" && slash > 10 &&
        name.substr(slash - 10, 10) == ".dist-info")
      return name.substr(0, slash);
  }
  return {};
}

RecordCheck verify_record(const std::filesystem::path& wheel) {
  int error_code = 0;
  zip_t* archive = zip_open(wheel.c_str(), ZIP_RDONLY, &error_code);
  if (!archive)
    fail_bad_input(wheel.string() + " is not a readable wheel (zip error " + std::to_string(error_code) + ")");
  std::unique_ptr<zip_t, decltype(&zip_discard)> guard(archive, zip_discard);
  std::map<std::string, zip_int64_t> members;
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    std::string name = zip_get_name(archive, i, 0);
    if (!name.empty() && name.back() != '/') members[name] = i;
  }
  auto dist_info = find_dist_info(archive);
  if (dist_info.empty()) fail_bad_input(wheel.string() + " has no *.dist-info/RECORD: not a wheel");
  std::string record_name = dist_info + "/RECORD";
  RecordCheck check;
  std::istringstream record(read_zip_member(archive, members[record_name], record_name));
  std::map<std::string, bool> listed;
  std::string line;
  while (std::getline(record, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto fields = record_row(line);
    if (fields.size() != 3) {
      check.errors.push_back("RECORD line is not path,hash,size: " + line);
      continue;
    }
    const auto& path = fields[0];
    listed[path] = true;
    if (path == record_name) continue;  // RECORD does not hash itself
    auto member = members.find(path);
    if (member == members.end()) {
      check.errors.push_back(path + ": listed in RECORD but missing from the wheel");
      continue;
    }
    if (fields[1].rfind("sha256=", 0) != 0) {
      check.errors.push_back(path + ": RECORD has no sha256 for it ('" + fields[1] + "')");
      continue;
    }
    auto bytes = read_zip_member(archive, member->second, path);
    ++check.files_checked;
    if (record_digest(bytes) != fields[1].substr(7))
      check.errors.push_back(path + ": sha256 does not match RECORD (the file was changed after the wheel was built)");
    else if (!fields[2].empty() && fields[2] != std::to_string(bytes.size()))
      check.errors.push_back(path + ": size " + std::to_string(bytes.size()) + " does not match RECORD's " + fields[2]);
  }
  for (const auto& [name, index] : members) {
    bool signature = name.size() > 4 &&
                     (name.substr(name.size() - 4) == ".jws" || name.substr(name.size() - 4) == ".p7s");
    if (!listed.count(name) && name != record_name && !signature)
      check.errors.push_back(name + ": in the wheel but not in RECORD");
  }
  return check;
}

std::vector<std::string> wheel_top_level_names(const std::filesystem::path& wheel) {
  int error_code = 0;
  zip_t* archive = zip_open(wheel.c_str(), ZIP_RDONLY, &error_code);
  if (!archive)
    fail_bad_input(wheel.string() + " is not a readable wheel (zip error " + std::to_string(error_code) + ")");
  std::unique_ptr<zip_t, decltype(&zip_discard)> guard(archive, zip_discard);
  std::set<std::string> names;
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    std::string name = zip_get_name(archive, i, 0);
    auto slash = name.find('/');
    if (slash != std::string::npos) {
      auto top = name.substr(0, slash);
      if (!top.ends_with(".dist-info") && !top.ends_with(".data") && name.substr(slash + 1) == "__init__.py")
        names.insert(top);
    } else if (name.ends_with(".py") || name.ends_with(".so")) {
      names.insert(name.substr(0, name.find('.')));  // module.py, _ext.cpython-311-x86_64-linux-gnu.so
    }
  }
  return {names.begin(), names.end()};
}

}  // namespace archbuild
