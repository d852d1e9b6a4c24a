#include "builder/build_history.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "core/json_text.h"

namespace archbuild {

nlohmann::json BuildTimeRecord::to_json() const {
  return {{"recipe", recipe},
          {"source", source},
          {"ref", ref},
          {"arch_list", arch_list},
          {"compile_inputs", compile_inputs},
          {"code_images", code_images},
          {"parallelism", parallelism},
          {"nvcc_threads", nvcc_threads},
          {"cores", cores},
          {"compile_cache", compile_cache},
          {"warm", warm},
          {"clean", clean},
          {"wall_seconds", wall_seconds},
          {"serial_seconds", serial_seconds},
          {"span_seconds", span_seconds},
          {"nvcc_seconds", nvcc_seconds},
          {"other_seconds", other_seconds},
          {"cpu_seconds", cpu_seconds},
          {"tree_bytes", tree_bytes},
          {"finished_at", finished_at}};
}

BuildTimeRecord BuildTimeRecord::from_json(const nlohmann::json& json) {
  BuildTimeRecord record;
  record.recipe = json.at("recipe").get<std::string>();
  record.ref = json.at("ref").get<std::string>();
  record.source = json.value("source", "");
  record.arch_list = json.value("arch_list", "");
  record.compile_inputs = json.value("compile_inputs", "");
  record.code_images = std::max<size_t>(1, json.at("code_images").get<size_t>());
  record.parallelism = std::max(1u, json.at("parallelism").get<unsigned>());
  record.nvcc_threads = std::max(1u, json.value("nvcc_threads", 1u));
  record.cores = std::max(1u, json.value("cores", 1u));
  record.compile_cache = json.value("compile_cache", false);
  record.warm = json.value("warm", false);
  record.clean = json.value("clean", true);
  record.wall_seconds = json.at("wall_seconds").get<double>();
  record.serial_seconds = json.value("serial_seconds", 0.0);
  record.span_seconds = json.value("span_seconds", 0.0);
  record.nvcc_seconds = json.value("nvcc_seconds", 0.0);
  record.other_seconds = json.value("other_seconds", 0.0);
  record.cpu_seconds = json.value("cpu_seconds", 0.0);
  record.tree_bytes = json.value("tree_bytes", uint64_t{0});
  record.finished_at = json.value("finished_at", "");
  for (double value :
       {record.wall_seconds, record.serial_seconds, record.span_seconds, record.nvcc_seconds, record.other_seconds})
    if (!(value >= 0) || value > 1e7) throw std::invalid_argument("a time out of range");
  return record;
}

namespace {

bool is_nvcc_step(const std::string& target, const std::vector<std::string>& nvcc_outputs) {
  if (target.ends_with(".cu.o") || target.ends_with(".cuda.o")) return true;
  // ninja names an output as its build.ninja spells it, nvcc's -o as the
  // compiler got it: one may be relative to the build dir, the other absolute.
  return std::any_of(nvcc_outputs.begin(), nvcc_outputs.end(), [&](const std::string& output) {
    if (output.empty()) return false;
    const auto& longer = output.size() >= target.size() ? output : target;
    const auto& shorter = output.size() >= target.size() ? target : output;
    return longer.ends_with(shorter) &&
           (longer.size() == shorter.size() || longer[longer.size() - shorter.size() - 1] == '/');
  });
}

}  // namespace

void fill_step_times(BuildTimeRecord& record, const std::vector<NinjaStep>& steps,
                     const std::vector<std::string>& nvcc_outputs) {
  if (steps.empty()) {
    record.span_seconds = record.wall_seconds;
    record.serial_seconds = 0;
    record.nvcc_seconds = record.wall_seconds * std::max(1u, std::min(record.parallelism, record.cores));
    record.other_seconds = 0;
    return;
  }
  long first = std::numeric_limits<long>::max(), last = std::numeric_limits<long>::min();
  double nvcc_ms = 0, other_ms = 0;
  // Each .ninja_log counts from its own ninja's start: with several (one per
  // extension, run one after another) this span is the longest one's, and
  // the rest of their time counts as serial, which the model does not scale.
  for (const auto& step : steps) {
    first = std::min(first, step.start_ms);
    last = std::max(last, step.end_ms);
    (is_nvcc_step(step.target, nvcc_outputs) ? nvcc_ms : other_ms) += std::max(0L, step.duration_ms());
  }
  record.span_seconds = std::min(record.wall_seconds, std::max(0L, last - first) / 1000.0);
  record.serial_seconds = std::max(0.0, record.wall_seconds - record.span_seconds);
  record.nvcc_seconds = nvcc_ms / 1000.0;
  record.other_seconds = other_ms / 1000.0;
}

std::filesystem::path build_history_file(const std::filesystem::path& cache_dir, const std::string& recipe) {
  return cache_dir / "history" / (recipe + ".jsonl");
}

void append_build_history(const std::filesystem::path& cache_dir, const BuildTimeRecord& record) {
  const auto file = build_history_file(cache_dir, record.recipe);
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  const auto line = json_text(record.to_json(), -1) + "\n";
  // Non-blocking: a FIFO put there would hold a finished build forever.
  int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) fail_environment("cannot write the build history " + file.string() + ": " + std::strerror(errno));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    fail_environment("the build history " + file.string() + " is not a regular file");
  }
  bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!written) fail_environment("cannot write the build history " + file.string());
}

std::vector<BuildTimeRecord> read_build_history(const std::filesystem::path& cache_dir, const std::string& recipe) {
  constexpr std::streamoff kTail = 1 << 20;
  std::vector<BuildTimeRecord> records;
  std::error_code ec;
  const auto file = build_history_file(cache_dir, recipe);
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(file, ec))) return records;
  std::ifstream in(file, std::ios::binary);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(size > kTail ? size - kTail : std::streamoff(0));
  std::string line;
  if (size > kTail) std::getline(in, line);  // a partial first line
  while (std::getline(in, line)) {
    auto json = nlohmann::json::parse(line, nullptr, false);
    if (!json.is_object()) continue;
    try {
      auto record = BuildTimeRecord::from_json(json);
      if (record.recipe == recipe) records.push_back(std::move(record));
    } catch (const std::exception&) {
      // a line of another version, or damaged: not a record
    }
  }
  return records;
}

uint64_t tree_bytes(const std::filesystem::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) total += it->file_size(ec);
  }
  return total;
}

}  // namespace archbuild
