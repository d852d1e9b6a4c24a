#pragma once

#include <string>
#include <vector>

namespace archbuild {

// The CUDA_VISIBLE_DEVICES value that shows a child exactly the GPUs of
// these driver ordinals. The driver numbers the devices it shows from 0, so
// when the user has set CUDA_VISIBLE_DEVICES (`user`, "2,3" or UUIDs)
// ordinal i is the user's i-th entry, not physical GPU i; unset or empty:
// the ordinals themselves.
std::string visible_devices_for(const std::vector<int>& ordinals, const std::string& user);

}  // namespace archbuild
