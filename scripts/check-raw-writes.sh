#!/usr/bin/env bash
# Checks that no C++ file under src/ outside src/core/ writes a file by hand:
# a std::ofstream or std::fstream, or an fopen with a write mode ("w", "a",
# "+"). Those follow a symbolic link and drop a failed write (a full disk
# leaves a short file); core's writers (core/regular_file.h:
# write_whole_file, write_file_atomically, OutputFile) check every write.
# Names each file:line and exits 1; exits 0 with a summary when there is none.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "") ;;
  -h | --help)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "check-raw-writes: unknown argument '$1'" >&2
    exit 2
    ;;
esac

files=()
while IFS= read -r -d '' file; do
  files+=("$file")
done < <(find src -path src/core -prune -o -type f \( -name '*.cpp' -o -name '*.h' \) -print0 | sort -z)
if ((${#files[@]} == 0)); then
  echo "check-raw-writes: no files under src/ to check" >&2
  exit 2
fi

# What is left of each line after a // comment, so prose may name them.
found=$(awk '
  {
    code = $0
    sub(/\/\/.*/, "", code)
    if (code ~ /std::(basic_)?w?o?fstream([^A-Za-z0-9_]|$)/ ||
        code ~ /(^|[^A-Za-z0-9_])fopen(64)?[ \t]*\([^;]*"[^"]*[wa+][^"]*"/)
      printf "%s:%d: %s\n", FILENAME, FNR, $0
  }' "${files[@]}")

if [[ -z $found ]]; then
  echo "check-raw-writes: ${#files[@]} files under src/ (outside src/core/) checked, none writes a file by hand"
  exit 0
fi

printf '%s\n' "$found" | sed 's/^/check-raw-writes: /' >&2
count=$(printf '%s\n' "$found" | wc -l)
echo "check-raw-writes: $count raw writes; use write_whole_file, write_file_atomically or OutputFile (core/regular_file.h)" >&2
exit 1
