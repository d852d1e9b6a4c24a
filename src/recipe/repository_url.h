#pragma once

#include <string>
#include <string_view>

namespace archbuild {

// A PyPI project name as PEP 503 compares them: lower case, every run of
// '-', '_' and '.' one '-' ("Torch_Scatter" -> "torch-scatter").
std::string canonical_project_name(std::string_view name);
// PEP 508: ASCII letters and digits, with '-', '_' and '.' inside.
bool valid_project_name(std::string_view name);

// "pypi:NAME": a recipe's repository, or a source, that is a PyPI project.
constexpr std::string_view kPypiPrefix = "pypi:";
inline bool is_pypi_repository(std::string_view text) { return text.substr(0, kPypiPrefix.size()) == kPypiPrefix; }

// What a repository URL names, for telling whether two spellings are the
// same repository: the host lower-cased without user, default port or
// scheme, the path without a trailing '/' or ".git". So
// https://github.com/o/r, http://GitHub.com/o/r.git/, git@github.com:o/r.git
// and ssh://git@github.com/o/r are all "github.com/o/r"; a path stays
// case-sensitive. file:// URLs keep "file://" and their path; "pypi:NAME"
// gives "pypi:" and the canonical name. "" for text that is no URL.
std::string repository_identity(const std::string& url);
// One identity, or (on github.com and gitlab.com, which look owner and name
// up in any case) one identity but for case. The identity itself keeps the
// case: it is part of cache keys.
bool same_repository(const std::string& a, const std::string& b);

}  // namespace archbuild
