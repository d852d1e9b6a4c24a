#include "wheel/wheel_relabel.h"

#include <unistd.h>

#include <memory>
#include <sstream>

#include <zip.h>

#include "core/error.h"
#include "wheel/wheel_archive.h"

namespace archbuild {

std::string cuda_label(const CudaVersion& cuda) {
  return "cu" + std::to_string(cuda.major) + std::to_string(cuda.minor);
}

std::string local_version_label(const CudaVersion& cuda, const ArchList& archs) {
  std::string label = cuda_label(cuda);
  for (const auto& target : archs.targets()) {
    std::string digits = std::to_string(target.cc.major) + std::to_string(target.cc.minor) +
                         variant_suffix(target.variant);
    label += target.sass ? ".sm" + digits + (target.ptx ? "ptx" : "") : ".compute" + digits;
  }
  return label;
}

std::string version_with_label(const std::string& version, const std::string& label) {
  auto plus = version.find('+');
  if (plus == std::string::npos) return version + "+" + label;
  auto local = version.substr(plus + 1);
  if (local == label || local.ends_with("." + label)) return version;
  return version + "." + label;
}

namespace {

// PEP 427's escaping of a version in file and directory names.
std::string escape_component(std::string text) {
  for (auto& c : text)
    if (c == '-') c = '_';
  return text;
}

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};

}  // namespace

RelabeledWheel relabel_wheel(const std::filesystem::path& wheel, const std::string& label,
                             const std::vector<DistInfoFile>& added) {
  auto name = WheelName::parse(wheel.filename().string());
  if (!name) fail_bad_input(wheel.string() + ": not a wheel file name (PEP 427: NAME-VERSION-PYTHON-ABI-PLATFORM.whl)");
  // No label: the version stays (a variant wheel carries its public version).
  const std::string version = label.empty() ? name->version : version_with_label(name->version, label);
  if (version == name->version && added.empty()) return {wheel, version};
  for (const auto& file : added)
    if (file.name.empty() || file.name.find('/') != std::string::npos || file.name == "RECORD" ||
        file.name == "METADATA")
      fail_bad_input("cannot add '" + file.name + "' to a wheel's .dist-info");

  // Work on a copy so the original stays whole until the new wheel is in place.
  auto new_file = name->name + "-" + escape_component(version) + (name->build.empty() ? "" : "-" + name->build) + "-" +
                  name->python + "-" + name->abi + "-" + name->platform + ".whl";
  auto target = wheel.parent_path() / new_file;
  auto temporary = wheel.parent_path() / (".relabel-" + std::to_string(getpid()) + "-" + new_file);
  std::filesystem::copy_file(wheel, temporary, std::filesystem::copy_options::overwrite_existing);
  auto cleanup = [&] {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
  };
  int error_code = 0;
  std::unique_ptr<zip_t, ZipCloser> archive(zip_open(temporary.c_str(), 0, &error_code));
  if (!archive) {
    cleanup();
    fail_bad_input(wheel.string() + " is not a readable wheel (zip error " + std::to_string(error_code) + ")");
  }
  try {
    const auto old_dist_info = find_dist_info(archive.get());
    if (old_dist_info.empty()) fail_bad_input(wheel.string() + " has no *.dist-info/RECORD: not a wheel");
    const auto old_prefix = old_dist_info.substr(0, old_dist_info.size() - std::string(".dist-info").size());
    auto dash = old_prefix.rfind('-');
    if (dash == std::string::npos)
      fail_bad_input(wheel.string() + ": dist-info directory '" + old_dist_info + "' is not NAME-VERSION");
    const auto new_prefix = old_prefix.substr(0, dash + 1) + escape_component(version);
    auto renamed = [&](const std::string& path) {
      for (const char* suffix : {".dist-info/", ".data/"}) {
        auto from = old_prefix + suffix;
        if (path.rfind(from, 0) == 0) return new_prefix + suffix + path.substr(from.size());
      }
      return path;
    };

    // METADATA's Version line gets the label.
    const auto metadata_name = old_dist_info + "/METADATA";
    auto metadata_index = zip_name_locate(archive.get(), metadata_name.c_str(), 0);
    if (metadata_index < 0) fail_bad_input(wheel.string() + ": " + metadata_name + " is missing");
    std::istringstream metadata_in(read_zip_member(archive.get(), metadata_index, metadata_name));
    std::string metadata, line;
    bool version_seen = false;
    while (std::getline(metadata_in, line)) {
      if (!version_seen && line.rfind("Version:", 0) == 0) {
        line = "Version: " + version;
        version_seen = true;
      }
      metadata += line + "\n";
    }
    if (!version_seen) fail_bad_input(wheel.string() + ": " + metadata_name + " has no Version line");

    // RECORD: renamed paths, METADATA's new hash and size, RECORD itself last.
    const auto record_name = old_dist_info + "/RECORD";
    auto record_index = zip_name_locate(archive.get(), record_name.c_str(), 0);
    std::istringstream record_in(read_zip_member(archive.get(), record_index, record_name));
    std::string record;
    auto is_added = [&](const std::string& path) {
      for (const auto& file : added)
        if (path == old_dist_info + "/" + file.name) return true;
      return false;
    };
    while (std::getline(record_in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      auto fields = record_row(line);
      if (fields.size() != 3) fail_bad_input(wheel.string() + ": RECORD line is not path,hash,size: " + line);
      if (fields[0] == record_name || is_added(fields[0])) continue;
      if (fields[0] == metadata_name)
        fields = {metadata_name, "sha256=" + record_digest(metadata), std::to_string(metadata.size())};
      fields[0] = renamed(fields[0]);
      record += record_row_text(fields) + "\n";
    }
    for (const auto& file : added)
      record += record_row_text({renamed(old_dist_info + "/" + file.name), "sha256=" + record_digest(file.content),
                                 std::to_string(file.content.size())}) +
                "\n";
    record += renamed(record_name) + ",,\n";

    // Every member written here gets METADATA's original time, not the
    // clock's: the same build relabeled twice is the same bytes (a store
    // entry, its index link and a pushed copy keep one sha256).
    zip_stat_t metadata_stat;
    zip_stat_init(&metadata_stat);
    const time_t fixed_mtime = zip_stat_index(archive.get(), static_cast<zip_uint64_t>(metadata_index), 0,
                                              &metadata_stat) == 0 &&
                                       (metadata_stat.valid & ZIP_STAT_MTIME)
                                   ? metadata_stat.mtime
                                   : 315532800;  // 1980-01-01, zip's epoch
    auto set_time = [&](zip_int64_t index) {
      if (zip_file_set_mtime(archive.get(), static_cast<zip_uint64_t>(index), fixed_mtime, 0) != 0)
        fail_environment("cannot rewrite " + wheel.string() + ": " + zip_strerror(archive.get()));
    };
    // Sources handed to libzip must outlive zip_close: keep the strings here.
    auto replace = [&](zip_int64_t index, const std::string& bytes) {
      zip_source_t* source = zip_source_buffer(archive.get(), bytes.data(), bytes.size(), 0);
      if (!source || zip_file_replace(archive.get(), index, source, ZIP_FL_ENC_UTF_8) != 0) {
        if (source) zip_source_free(source);
        fail_environment("cannot rewrite " + wheel.string() + ": " + zip_strerror(archive.get()));
      }
      set_time(index);
    };
    replace(metadata_index, metadata);
    replace(record_index, record);
    for (const auto& file : added) {
      const auto old_path = old_dist_info + "/" + file.name;
      auto existing = zip_name_locate(archive.get(), old_path.c_str(), 0);
      if (existing >= 0) {
        replace(existing, file.content);
        continue;
      }
      zip_source_t* source = zip_source_buffer(archive.get(), file.content.data(), file.content.size(), 0);
      const zip_int64_t index = source ? zip_file_add(archive.get(), old_path.c_str(), source, ZIP_FL_ENC_UTF_8)
                                       : zip_int64_t{-1};
      if (index < 0) {
        if (source) zip_source_free(source);
        fail_environment("cannot add " + old_path + " to " + wheel.string() + ": " + zip_strerror(archive.get()));
      }
      set_time(index);
    }
    for (zip_int64_t i = 0; i < zip_get_num_entries(archive.get(), 0); ++i) {
      std::string path = zip_get_name(archive.get(), i, 0);
      auto new_path = renamed(path);
      if (new_path != path && zip_file_rename(archive.get(), i, new_path.c_str(), ZIP_FL_ENC_UTF_8) != 0)
        fail_environment("cannot rename " + path + " in " + wheel.string() + ": " + zip_strerror(archive.get()));
    }
    // Unchanged members are copied as stored; zip_close writes aside and renames.
    if (zip_close(archive.get()) != 0)
      fail_environment("cannot write " + temporary.string() + ": " + zip_strerror(archive.get()));
    archive.release();
  } catch (...) {
    cleanup();
    throw;
  }
  std::filesystem::rename(temporary, target);
  if (target != wheel) std::filesystem::remove(wheel);
  return {target, version};
}

}  // namespace archbuild
