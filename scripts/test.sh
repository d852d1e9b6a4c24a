#!/usr/bin/env bash
# README's test command (and CI's, through .ci/run): installs what is missing,
# builds, and runs the suite in tiers (ctest labels, docs/TESTING.md).
#
#   scripts/test.sh                 everything: every label below, then the
#                                   aarch64 stage (cross) under qemu-user
#   scripts/test.sh --quick         the edit loop: unit and cli
#   scripts/test.sh --label L       one label: unit, cli, build, servers,
#                                   cluster, cross or gpu (repeatable)
#   scripts/test.sh ... -- ARGS     ARGS go to ctest (-R PATTERN, -V, ...)
#
# Tests run in parallel (ARCHBUILD_TEST_JOBS, default: cores + 1; a test that
# compiles claims two slots). A failing stage does not stop the next one; the
# run exits 1 if any failed and ends with its 15 slowest tests.
# ARCHBUILD_SKIP_AARCH64=1 leaves the cross stage out of a full run.
# Downloads (PyPI toolkits and wheels) are cached in $ARCHBUILD_TEST_CACHE
# (default ~/.cache/archbuild-test) and reused across runs.
set -euo pipefail
cd "$(dirname "$0")/.."

all_labels=(unit cli build servers cluster gpu cross)
labels=()
ctest_args=()
while (($#)); do
  case "$1" in
    --quick) labels+=(unit cli) ;;
    --label | -L)
      [[ $# -ge 2 ]] || { echo "test.sh: $1 needs a label (${all_labels[*]})" >&2; exit 2; }
      [[ " ${all_labels[*]} " == *" $2 "* ]] || { echo "test.sh: unknown label '$2' (${all_labels[*]})" >&2; exit 2; }
      labels+=("$2")
      shift
      ;;
    --) shift; ctest_args+=("$@"); break ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ctest_args+=("$1") ;;
  esac
  shift
done
full=0
if ((${#labels[@]} == 0)); then
  full=1
  labels=("${all_labels[@]}")
  [[ ${ARCHBUILD_SKIP_AARCH64:-0} == 1 ]] && labels=("${labels[@]/cross/}")
fi

bash scripts/install-deps.sh --tests
bash scripts/build.sh
# The compile cache the suite's builds share (tests/cli/harness.py): a whole
# run starts it empty, so each distinct compile is paid once per run.
((full)) && rm -rf build/test-compile-cache build-aarch64/test-compile-cache

native_labels=()
cross=0
for label in "${labels[@]}"; do
  [[ -z $label ]] && continue
  if [[ $label == cross ]]; then cross=1; else native_labels+=("$label"); fi
done

started=$(date +%s)
status=0
results=()
if ((${#native_labels[@]})); then
  jobs=${ARCHBUILD_TEST_JOBS:-$(($(nproc) + 1))}
  selection=()
  ((full)) || selection=(-L "^($(IFS='|'; echo "${native_labels[*]}"))\$")
  junit="$PWD/build/test-results.xml"
  (cd build && ctest --output-on-failure --timeout 1500 -j "$jobs" --output-junit "$junit" \
    "${selection[@]}" "${ctest_args[@]}") || status=1
  results+=("$junit")
fi
if ((cross)); then
  junit="$PWD/build-aarch64/test-results.xml"
  rm -f "$junit" build-aarch64/unit-results.xml
  bash scripts/test-aarch64.sh --output-junit "$junit" "${ctest_args[@]}" || status=1
  [[ -f $junit ]] && results+=("$junit")
  [[ -f build-aarch64/unit-results.xml ]] && results+=("$PWD/build-aarch64/unit-results.xml")
fi
if ((${#results[@]})); then
  python3 scripts/slowest-tests.py --top 15 "${results[@]}" || true
fi
echo "test.sh: labels ${labels[*]}: $(($(date +%s) - started)) s of tests, $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit "$status"
