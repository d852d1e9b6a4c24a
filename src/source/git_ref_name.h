#pragma once

#include <string>

namespace archbuild {

// Whether `ref` can name a tag, branch or commit as git spells them (libgit2's
// rules for refs/tags/REF, and no leading '-' an option parser would take):
// `../../etc`, `a..b` and `bad ref` are not. Checked before any fetch, since
// retrying a fetch will not make one valid.
bool is_valid_git_ref_name(const std::string& ref);

}  // namespace archbuild
