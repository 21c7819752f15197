#!/usr/bin/env bash
# On the GPU machine: unpack the player bundle (make_player_bundle.sh) and run j2kplay's own
# window on the GPU's GL through NVIDIA's device-platform EGL (eglfs + the j2k_egldevice
# plugin), with the CUDA-GL display path. Writes screenshots and logs under OUT.
#
#   bash bench/ui/device_player.sh BUNDLE_DIR OUT [SECONDS]
set -uo pipefail
bundle="$1"
out="$2"
seconds="${3:-3}"
mkdir -p "$out"
J2K_EGLDEVICE_SIZE=1280x720
. "$(dirname "$0")/eglfs_env.sh"
echo "EGL vendor: ${__EGL_VENDOR_LIBRARY_FILENAMES:-none found}"
nvidia-smi -L || true

run_player() {  # name, extra options
  local name="$1"; shift
  timeout 300 "$root/bin/j2kplay" --demo --screenshot "$out/$name.png" --quit-after "$seconds" \
    --window-size 1280x720 --no-overlay "$@" >"$out/$name.log" 2>&1
  echo "$name: exit $? — $(grep -E 'OpenGL|screenshot|display path|shown' "$out/$name.log" | tr '\n' ' ')"
}
run_player gpu --gpu on
run_player cpu --gpu off
if [ -x "$root/bin/ui_gpu_tests" ]; then
  J2K_PLAYER_ROOT="$root" "$root/bin/ui_gpu_tests" 2>&1 | tee "$out/ui_gpu_tests.log" | tail -20
fi
