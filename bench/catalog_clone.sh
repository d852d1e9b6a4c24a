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
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
recipe=$1 source=$2 dest=${3:-.fetched/src/$1}
file=recipes/$recipe.toml
[[ -f $file ]] || { echo "catalog_clone: no recipe $file" >&2; exit 2; }
value() { sed -n "s/^$1 *= *\"\\([^\"]*\\)\".*/\\1/p" "$file" | head -1; }
repository=$(value repository) ref=$(value default_ref)
[[ $repository == http* && -n $ref ]] || { echo "catalog_clone: $file names no git repository and default_ref" >&2; exit 2; }
[[ -d $source ]] && source=$(cd "$source" && pwd)
rm -rf "$dest"
git clone -q --no-checkout "$source" "$dest"
git -C "$dest" -c advice.detachedHead=false checkout -q -B archbuild-ref "$ref" ||
  { echo "catalog_clone: $source has no $ref (the recipe's default_ref)" >&2; rm -rf "$dest"; exit 1; }
git -C "$dest" remote set-url origin "$repository"
if grep -q '^submodules *= *true' "$file"; then
  git -C "$dest" submodule update -q --init --recursive ||
    echo "catalog_clone: the submodules of $dest could not be fetched (offline?): archbuild fetches them itself" >&2
fi
echo "$dest: $(git -C "$dest" rev-parse --short HEAD) ($ref), origin $repository, $(du -sh "$dest" | cut -f1)"
