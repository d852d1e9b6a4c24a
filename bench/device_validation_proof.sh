#!/usr/bin/env bash
# On the GPU machine (carry .device and .fetched; see docs/TESTING.md): the
# proof that validation launches and checks the wheels' own kernels, all at
# once in the background so one command's time holds it:
#   1. tests/gpu/test_gpu.py's kernel-proof tests (planted defect, the
#      non-torch fixture's census, the dual-library package's exerciser);
#   2. bench/validation_proof.py on public projects without a recipe and on
#      two shipped recipes (each as its own process, its own cache);
#   3. the machine's installed torch packed back into a wheel
#      (bench/repack_installed.py) and validated with the torch recipe.
# Then it waits until every job ended or LIMIT seconds passed, and copies the
# results and logs to $OUT (or WORK/out).
# Usage: bench/device_validation_proof.sh WORK PYTHON [LIMIT_S]
set -uo pipefail
cd "$(dirname "$0")/.."
work=$1 python=$2 limit=${3:-540}
started=$SECONDS
mkdir -p "$work"
rm -rf "$work/device" && cp -r .device "$work/device"  # a copy: archbuild re-executes its own binary
bin="$work/device/bin/archbuild-wrapper"
export NO_COLOR=1 ARCHBUILD_DATA_DIR=$PWD PATH="$work/device/bin:$(dirname "$python"):$PATH"
mirror="https://github.com/=file://$PWD/.fetched/"
proof() {  # NAME-OF-RUN ARGS...: one validation_proof.py process
  local run=$1
  shift
  python3 bench/validation_proof.py --archbuild "$bin" --python "$python" --cache "$work/$run" \
    --out "$work/$run.json" --mirror "$mirror" --arg "*:--test-timeout" --arg "*:150" "$@" >"$work/$run.log" 2>&1
}
ARCHBUILD_BIN="$bin" ARCHBUILD_GPU_PYTHON="$python" python3 tests/gpu/test_gpu.py KernelProofTest \
  DeviceValidation.test_fixture_wheel_passes_device_validation \
  DeviceValidation.test_dual_library_package_and_its_project_tests >"$work/gpu_tests.log" 2>&1 &
proof no-recipe-1 \
  torchmd-net=export:.fetched/torchmd/torchmd-net.git@75b16e625039a5e5e79c5e9d679c6c92ee274445 \
  nerfacc=export:.fetched/nerfstudio-project/nerfacc.git@57ccfa14feb94975836ea6913149a86737220f2b \
  --patch nerfacc:.fetched/patches/nerfacc-cccl3.patch &
proof no-recipe-2 --ref detectron2:02b5c4e295e990042a714712c21dc79b731e8833 --env detectron2:FORCE_CUDA=1 \
  detectron2=https://github.com/facebookresearch/detectron2.git &
proof recipes extension-cpp=extension-cpp pytorch-scatter=pytorch-scatter &
(
  wheel=$(python3 bench/repack_installed.py torch "$work/torch-wheel" --python "$python") &&
    "$bin" validate "$wheel" --recipe torch --python "$python" --work-dir "$work/torch-validate" --json \
      >"$work/torch_validate.json" 2>"$work/torch_validate.log"
) &
while (($(jobs -rp | wc -l) > 0 && SECONDS - started < limit)); do sleep 5; done
out=${OUT:-$work/out}
mkdir -p "$out"
cp "$work"/*.json "$work"/*.log "$out/" 2>/dev/null
for run in no-recipe-1 no-recipe-2 recipes; do
  [[ -d $work/$run.json-reports ]] && cp -r "$work/$run.json-reports" "$out/"
done
jobs -rp | xargs -r echo "still running:"
echo "done after $((SECONDS - started)) s"
