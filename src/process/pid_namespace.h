#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace archbuild {

// A build step runs in a PID namespace of its own (the step supervisor), so
// a pid a compile reports about itself means nothing to archbuild outside it.
// These translate, through /proc.

// The inode of /proc/PROCESS/ns/pid ("self": this process), which names a
// PID namespace the same way inside and outside it; nullopt where /proc does
// not say.
std::optional<std::uint64_t> pid_namespace_inode(const std::string& process = "self");

// For each pid in `inner`, as processes in the namespace `ns` know
// themselves, the pid this process knows it by: the last and first fields
// of their NSpid line. Pids not found (the process has ended) are absent.
std::map<int, int> outer_pids(std::uint64_t ns, const std::set<int>& inner);

}  // namespace archbuild
