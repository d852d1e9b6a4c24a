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

namespace {

// The rewrite of one wheel's copy (`temporary`): its .dist-info (and .data)
// renamed for the new version, METADATA's Version line, RECORD, and the
// files added to .dist-info; each step a method.
class WheelRewrite {
 public:
  WheelRewrite(const std::filesystem::path& wheel, const std::filesystem::path& temporary, std::string version,
               const std::vector<DistInfoFile>& added)
      : wheel_(wheel), temporary_(temporary), version_(std::move(version)), added_(added) {}

  void run() {
    open();
    name_dist_info();
    metadata_ = labelled_metadata();
    record_ = rewritten_record();
    fixed_mtime_ = metadata_mtime();
    replace(metadata_index_, metadata_);
    replace(record_index_, record_);
    add_files();
    rename_members();
    // Unchanged members are copied as stored; zip_close writes aside and renames.
    if (zip_close(archive_.get()) != 0)
      fail_environment("cannot write " + temporary_.string() + ": " + zip_strerror(archive_.get()));
    archive_.release();
  }

 private:
  void open() {
    int error_code = 0;
    archive_.reset(zip_open(temporary_.c_str(), 0, &error_code));
    if (!archive_)
      fail_bad_input(wheel_.string() + " is not a readable wheel (zip error " + std::to_string(error_code) + ")");
  }

  void name_dist_info() {
    old_dist_info_ = find_dist_info(archive_.get());
    if (old_dist_info_.empty()) fail_bad_input(wheel_.string() + " has no *.dist-info/RECORD: not a wheel");
    old_prefix_ = old_dist_info_.substr(0, old_dist_info_.size() - std::string(".dist-info").size());
    auto dash = old_prefix_.rfind('-');
    if (dash == std::string::npos)
      fail_bad_input(wheel_.string() + ": dist-info directory '" + old_dist_info_ + "' is not NAME-VERSION");
    new_prefix_ = old_prefix_.substr(0, dash + 1) + escape_component(version_);
  }

  std::string renamed(const std::string& path) const {
    for (const char* suffix : {".dist-info/", ".data/"}) {
      auto from = old_prefix_ + suffix;
      if (path.rfind(from, 0) == 0) return new_prefix_ + suffix + path.substr(from.size());
    }
    return path;
  }

  // METADATA's Version line gets the label.
  std::string labelled_metadata() {
    const auto name = old_dist_info_ + "/METADATA";
    metadata_index_ = zip_name_locate(archive_.get(), name.c_str(), 0);
    if (metadata_index_ < 0) fail_bad_input(wheel_.string() + ": " + name + " is missing");
    std::istringstream in(read_zip_member(archive_.get(), metadata_index_, name));
    std::string metadata, line;
    bool version_seen = false;
    while (std::getline(in, line)) {
      if (!version_seen && line.rfind("Version:", 0) == 0) {
        line = "Version: " + version_;
        version_seen = true;
      }
      metadata += line + "\n";
    }
    if (!version_seen) fail_bad_input(wheel_.string() + ": " + name + " has no Version line");
    return metadata;
  }

  bool is_added(const std::string& path) const {
    for (const auto& file : added_)
      if (path == old_dist_info_ + "/" + file.name) return true;
    return false;
  }

  // RECORD: renamed paths, METADATA's new hash and size, RECORD itself last.
  std::string rewritten_record() {
    const auto metadata_name = old_dist_info_ + "/METADATA";
    const auto record_name = old_dist_info_ + "/RECORD";
    record_index_ = zip_name_locate(archive_.get(), record_name.c_str(), 0);
    std::istringstream in(read_zip_member(archive_.get(), record_index_, record_name));
    std::string record, line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      auto fields = record_row(line);
      if (fields.size() != 3) fail_bad_input(wheel_.string() + ": RECORD line is not path,hash,size: " + line);
      if (fields[0] == record_name || is_added(fields[0])) continue;
      if (fields[0] == metadata_name)
        fields = {metadata_name, "sha256=" + record_digest(metadata_), std::to_string(metadata_.size())};
      fields[0] = renamed(fields[0]);
      record += record_row_text(fields) + "\n";
    }
    for (const auto& file : added_)
      record += record_row_text({renamed(old_dist_info_ + "/" + file.name), "sha256=" + record_digest(file.content),
                                 std::to_string(file.content.size())}) +
                "\n";
    return record + renamed(record_name) + ",,\n";
  }

  // Every member written here gets METADATA's original time, not the
  // clock's: the same build relabeled twice is the same bytes (a store
  // entry, its index link and a pushed copy keep one sha256).
  time_t metadata_mtime() const {
    zip_stat_t stat;
    zip_stat_init(&stat);
    return zip_stat_index(archive_.get(), static_cast<zip_uint64_t>(metadata_index_), 0, &stat) == 0 &&
                   (stat.valid & ZIP_STAT_MTIME)
               ? stat.mtime
               : 315532800;  // 1980-01-01, zip's epoch
  }

  void set_time(zip_int64_t index) {
    if (zip_file_set_mtime(archive_.get(), static_cast<zip_uint64_t>(index), fixed_mtime_, 0) != 0)
      fail_environment("cannot rewrite " + wheel_.string() + ": " + zip_strerror(archive_.get()));
  }

  // `bytes` must outlive zip_close (libzip reads it then): members of this object, or `added_`.
  void replace(zip_int64_t index, const std::string& bytes) {
    zip_source_t* source = zip_source_buffer(archive_.get(), bytes.data(), bytes.size(), 0);
    if (!source || zip_file_replace(archive_.get(), index, source, ZIP_FL_ENC_UTF_8) != 0) {
      if (source) zip_source_free(source);
      fail_environment("cannot rewrite " + wheel_.string() + ": " + zip_strerror(archive_.get()));
    }
    set_time(index);
  }

  void add_files() {
    for (const auto& file : added_) {
      const auto old_path = old_dist_info_ + "/" + file.name;
      auto existing = zip_name_locate(archive_.get(), old_path.c_str(), 0);
      if (existing >= 0) {
        replace(existing, file.content);
        continue;
      }
      zip_source_t* source = zip_source_buffer(archive_.get(), file.content.data(), file.content.size(), 0);
      const zip_int64_t index = source ? zip_file_add(archive_.get(), old_path.c_str(), source, ZIP_FL_ENC_UTF_8)
                                       : zip_int64_t{-1};
      if (index < 0) {
        if (source) zip_source_free(source);
        fail_environment("cannot add " + old_path + " to " + wheel_.string() + ": " + zip_strerror(archive_.get()));
      }
      set_time(index);
    }
  }

  void rename_members() {
    for (zip_int64_t i = 0; i < zip_get_num_entries(archive_.get(), 0); ++i) {
      std::string path = zip_get_name(archive_.get(), i, 0);
      auto new_path = renamed(path);
      if (new_path != path && zip_file_rename(archive_.get(), i, new_path.c_str(), ZIP_FL_ENC_UTF_8) != 0)
        fail_environment("cannot rename " + path + " in " + wheel_.string() + ": " + zip_strerror(archive_.get()));
    }
  }

  const std::filesystem::path& wheel_;
  const std::filesystem::path& temporary_;
  const std::string version_;
  const std::vector<DistInfoFile>& added_;
  std::unique_ptr<zip_t, ZipCloser> archive_;
  std::string old_dist_info_, old_prefix_, new_prefix_;
  zip_int64_t metadata_index_ = -1, record_index_ = -1;
  std::string metadata_, record_;
  time_t fixed_mtime_ = 0;
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
  try {
    WheelRewrite(wheel, temporary, version, added).run();
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    throw;
  }
  std::filesystem::rename(temporary, target);
  if (target != wheel) std::filesystem::remove(wheel);
  return {target, version};
}

}  // namespace archbuild
