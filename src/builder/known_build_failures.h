#pragma once

#include <string>
#include <string_view>

namespace archbuild {

// What a failed build's log says that archbuild knows the cause of: APIs the
// toolkit or torch removed, which old projects still use and no arch list
// or switch can fix. The cause and the cheapest way on, or "" when the log
// shows none of them.
//   CCCL 3 (CUDA 13) removed cub::Max, cub::Min and cub::Sum;
//   CUDA 13 removed cudaDeviceProp fields (clockRate, memoryClockRate, ...);
//   torch 1.11 removed THC (THC/THC.h).
std::string known_build_failure_hint(std::string_view log_text);

}  // namespace archbuild
