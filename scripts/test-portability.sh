#!/usr/bin/env bash
# Runs the number-sensitive tests under each condition that changes a machine's numbers, so a
# test that pins floats from BLAS, numpy's SIMD loops or a compiler fails here rather than on
# someone else's CPU:
#   - every OpenBLAS kernel family this CPU can run (OPENBLAS_CORETYPE),
#   - numpy's SIMD dispatch narrowed to its baseline (NPY_DISABLE_CPU_FEATURES),
#   - the numpy skeleton kernel instead of the compiled one (BONEVIEWER_KERNEL=numpy),
#   - one core (taskset -c 0, one pytest process).
# Usage: bash scripts/test-portability.sh [--all] [PYTEST ARGS...]
#   --all runs the whole suite under each condition instead of the number-sensitive files.
# Prints one line per condition and exits non-zero if any failed (its log is kept under out/).
set -uo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    # The header above, before anything is installed or run (pytest's own --help goes after --all).
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
    exit 0
fi
BONEVIEWER_TESTS=1
source "$(dirname "$0")/setup.sh"
cd "$BONEVIEWER_ROOT"
python="$BONEVIEWER_VENV/bin/python"

# The tests whose numbers pass through BLAS, LAPACK, numpy's SIMD loops, the compiled kernel or
# the rasteriser, and the recorded references they are compared with.
TESTS="tests/test_written_references.py tests/test_check.py tests/test_morph_babylon.py
  tests/test_gltf_babylon.py tests/test_model_babylon.py tests/test_space_babylon.py
  tests/test_controllers_babylon.py tests/test_bvh.py tests/test_retarget.py tests/test_kernel.py tests/test_animation_batch.py
  tests/test_model_seed.py tests/test_model_properties.py tests/test_skinning.py tests/test_gltf.py
  tests/test_gltf_writer.py tests/test_apply_pose_as_bind.py tests/test_morph.py tests/test_weights.py
  tests/test_skeleton_group.py tests/test_crowd.py tests/test_space.py tests/test_camera_matrices.py
  tests/test_gltf_extensions.py tests/test_value_range.py tests/test_render.py tests/test_picking.py
  tests/test_environment.py tests/test_hdr.py tests/test_fidelity.py tests/test_pbr_render.py
  tests/test_fbx.py tests/test_usd.py tests/test_usd_writer.py"
if [ "${1:-}" = "--all" ]; then
    TESTS=""
    shift
fi

conditions=()
case "$(uname -m)" in
    x86_64|amd64)
        flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
        has() { for flag in "$@"; do [[ "$flags" == *" $flag "* ]] || return 1; done; }
        conditions+=("OPENBLAS_CORETYPE=Prescott")
        has sse4_2 && conditions+=("OPENBLAS_CORETYPE=Nehalem")
        has avx && conditions+=("OPENBLAS_CORETYPE=Sandybridge")
        has avx2 fma && conditions+=("OPENBLAS_CORETYPE=Haswell" "OPENBLAS_CORETYPE=Zen")
        has avx512f avx512vl avx512bw avx512dq && conditions+=("OPENBLAS_CORETYPE=SkylakeX")
        has avx512f avx512_bf16 && conditions+=("OPENBLAS_CORETYPE=Cooperlake")
        ;;
    aarch64|arm64)
        conditions+=("OPENBLAS_CORETYPE=ARMV8" "OPENBLAS_CORETYPE=CORTEXA57")
        ;;
esac
# numpy's dispatched SIMD features this CPU has, all turned off: the baseline loops only.
dispatched=$("$python" -c 'from numpy._core import _multiarray_umath as m
print(" ".join(f for f in m.__cpu_dispatch__ if m.__cpu_features__.get(f)))' 2>/dev/null || true)
[ -n "$dispatched" ] && conditions+=("NPY_DISABLE_CPU_FEATURES=$dispatched")
conditions+=("BONEVIEWER_KERNEL=numpy" "one core")

mkdir -p out/portability
failed=0
for condition in "${conditions[@]}"; do
    log="out/portability/$(printf '%s' "$condition" | tr -c 'A-Za-z0-9=_-' '_').log"
    started=$SECONDS
    if [ "$condition" = "one core" ]; then
        command -v taskset >/dev/null || { echo "one core: skipped (no taskset)"; continue; }
        # shellcheck disable=SC2086
        taskset -c 0 "$python" -m pytest -n 0 -q -p no:cacheprovider $TESTS "$@" >"$log" 2>&1
    else
        # shellcheck disable=SC2086
        env "$condition" "$python" -m pytest -n auto -q -p no:cacheprovider $TESTS "$@" >"$log" 2>&1
    fi
    status=$?
    summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed)' "$log" | tail -n 1 | tr -d '=' | sed 's/^ *//')
    if [ "$status" = 0 ]; then
        echo "ok     $condition: ${summary:-passed} ($((SECONDS - started)) s)"
    else
        echo "FAILED $condition: ${summary:-exit $status} (log: $log)"
        failed=1
    fi
done
exit $failed
