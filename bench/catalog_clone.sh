#!/usr/bin/env bash
# Makes the local clone bench/device_catalog_run.sh builds for a catalogued
# project: SOURCE (a repository URL or path) cloned with its history and
# checked out at the recipe's default_ref on the branch `archbuild-ref`, its
# origin set to the recipe's repository, so that archbuild picks the recipe
# by itself; with the submodules where the recipe asks for them.
# History, not a shallow clone: archbuild fetches a local clone as a remote,
# and libgit2 then needs the commit's parents. A branch: a detached HEAD is
# no ref a fetch brings.
# Usage: bench/catalog_clone.sh RECIPE SOURCE [DEST]
#   DEST defaults to .fetched/src/RECIPE (what device_catalog_run.sh reads).
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
# SOURCE and DEST as the caller meant them, before the cd to the repository
recipe=$1 source=$2 dest=${3:-}
[[ -d $source ]] && source=$(cd "$source" && pwd)
[[ -n $dest ]] && dest=$(realpath -m "$dest")
cd "$(dirname "$0")/.."
dest=${dest:-$PWD/.fetched/src/$recipe}
file=recipes/$recipe.toml
[[ -f $file ]] || { echo "catalog_clone: no recipe $file" >&2; exit 2; }
value() { sed -n "s/^$1 *= *\"\\([^\"]*\\)\".*/\\1/p" "$file" | head -1; }
repository=$(value repository) ref=$(value default_ref)
[[ $repository == http* && -n $ref ]] || { echo "catalog_clone: $file names no git repository and default_ref" >&2; exit 2; }
case "$(realpath -m "$source")/" in "$dest"/*) echo "catalog_clone: SOURCE is inside DEST ($dest)" >&2; exit 2 ;; esac
case "$dest/" in "$(realpath -m "$source")"/*) echo "catalog_clone: DEST is inside SOURCE ($source)" >&2; exit 2 ;; esac
# Cloned aside and moved into place: a failed clone leaves DEST as it was.
scratch=$(mktemp -d "$(dirname "$dest")/.catalog-clone-XXXXXX" 2>/dev/null || { mkdir -p "$(dirname "$dest")" && mktemp -d "$(dirname "$dest")/.catalog-clone-XXXXXX"; })
trap 'rm -rf "$scratch"' EXIT
git clone -q --no-checkout "$source" "$scratch/clone"
# A branch ref the clone has only as origin/REF (SOURCE was on another branch).
commit=$(git -C "$scratch/clone" rev-parse -q --verify "$ref^{commit}" ||
  git -C "$scratch/clone" rev-parse -q --verify "origin/$ref^{commit}") ||
  { echo "catalog_clone: $source has no $ref (the recipe's default_ref)" >&2; exit 1; }
git -C "$scratch/clone" -c advice.detachedHead=false checkout -q -B archbuild-ref "$commit"
rm -rf "$dest"
mv "$scratch/clone" "$dest"
git -C "$dest" remote set-url origin "$repository"
if grep -q '^submodules *= *true' "$file"; then
  git -C "$dest" submodule update -q --init --recursive ||
    echo "catalog_clone: the submodules of $dest could not be fetched (offline?): archbuild fetches them itself" >&2
fi
echo "$dest: $(git -C "$dest" rev-parse --short HEAD) ($ref), origin $repository, $(du -sh "$dest" | cut -f1)"
