#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace archbuild {

// Free bytes on the filesystem holding `path` (or its nearest existing parent).
uint64_t free_disk_bytes(const std::filesystem::path& path);
// MemAvailable from /proc/meminfo, in bytes.
std::optional<uint64_t> available_memory_bytes();
unsigned cpu_count();
// gethostname(2), or "localhost" when it has none: what locks and unfinished
// publishes record, so a process on this host can tell a dead holder.
std::string host_name();
// The host's CPU as uname(2) names it ("x86_64", "aarch64"); wheel platform
// tags and PyTorch's release builds use the same words.
std::string host_machine();
// The host CPUs archbuild builds on and knows PyTorch's wheels for: the one
// list recipes, the official builds table and doctor's --machine accept.
inline constexpr const char* kKnownMachines[] = {"x86_64", "aarch64"};
bool is_known_machine(std::string_view machine);
std::string format_bytes(uint64_t bytes);  // "4.5 GiB"

}  // namespace archbuild
