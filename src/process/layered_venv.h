#pragma once

#include <filesystem>
#include <string>

namespace archbuild {

// Makes `dir` a fresh venv of `python` that still sees python's own
// site-packages behind the venv's, with their .pth files run (a .pth file
// adding them as site dirs: on an offline
// machine the dependencies come from there). `--system-site-packages` alone
// would give the base interpreter's packages, not those of a venv `python`
// lives in. pip comes from python's site-packages too (ensurepip only when
// it has none). Returns the venv's interpreter; throws UserError(environment).
std::string make_layered_venv(const std::string& python, const std::filesystem::path& dir);

}  // namespace archbuild
