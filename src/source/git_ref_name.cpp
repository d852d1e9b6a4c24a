#include "source/git_ref_name.h"

#include <git2.h>

#include "source/git_session.h"

namespace archbuild {

bool is_valid_git_ref_name(const std::string& ref) {
  if (ref.empty() || ref.starts_with("-")) return false;
  ensure_libgit2();
  int valid = 0;
  return git_reference_name_is_valid(&valid, ("refs/tags/" + ref).c_str()) == 0 && valid;
}

}  // namespace archbuild
