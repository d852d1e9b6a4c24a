#!/usr/bin/env bash
# Checks that every tracked C++ file under src/, tests/ and bench/ is formatted
# as .clang-format says; names the files that are not and exits 1.
#   scripts/check-format.sh          check
#   scripts/check-format.sh --fix    format those files in place
# CLANG_FORMAT picks the binary (default: clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  -h | --help)
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "check-format: unknown argument '$1' (expected --fix)" >&2
    exit 2
    ;;
esac

clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null; then
  echo "check-format: $clang_format not found (Debian: apt-get install clang-format)" >&2
  exit 2
fi

files=()
while IFS= read -r -d '' file; do
  [[ -f $file ]] && files+=("$file")  # tracked but deleted in the work tree: skip
done < <(git ls-files -z -- 'src/*.h' 'src/*.cpp' 'tests/*.h' 'tests/*.cpp' 'bench/*.h' 'bench/*.cpp')
if ((${#files[@]} == 0)); then
  echo "check-format: no files to check" >&2
  exit 2
fi

unformatted=()
for file in "${files[@]}"; do
  if ! output=$("$clang_format" --style=file --dry-run --Werror "$file" 2>&1); then
    if [[ $output != *clang-format-violations* ]]; then  # not a style verdict: a bad config, an unreadable file
      printf 'check-format: %s: clang-format failed:\n%s\n' "$file" "$output" >&2
      exit 2
    fi
    unformatted+=("$file")
  fi
done

if ((${#unformatted[@]} == 0)); then
  echo "check-format: ${#files[@]} files checked, all formatted as .clang-format says"
  exit 0
fi

if ((fix)); then
  "$clang_format" --style=file -i "${unformatted[@]}"
  printf 'check-format: formatted %s\n' "${unformatted[@]}"
  exit 0
fi

printf 'check-format: not formatted: %s\n' "${unformatted[@]}" >&2
echo "check-format: ${#unformatted[@]} of ${#files[@]} files; run scripts/check-format.sh --fix" >&2
exit 1
