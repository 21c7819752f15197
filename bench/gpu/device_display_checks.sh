#!/bin/bash
# The player's GPU display path on the GPU machine (issue 5): the GL hand-off tests and
# timings over headless EGL, the pool tests, compute-sanitizer on the new tests. Logs
# under $OUT. Bundle: bench/gpu/make_device_bundle.sh; run: bash .device/device_display_checks.sh
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib J2K_GPU_CORPUS=$PWD/corpus
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for f in gl/*.deb; do dpkg -x $f /; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
timeout 120 ./gpu_gl_tests > $OUT/gl.log 2>&1; echo "gl rc=$?"; grep -E "info|OK \]|FAILED|SKIPPED|Failure|PASSED" $OUT/gl.log
timeout 100 ./gpu_cuda_tests > $OUT/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|info \] pool" $OUT/tests.log
N='DevicePool.*:CudaPhoto.DecoderDisplayPath*'
timeout 100 compute-sanitizer --tool memcheck --leak-check full ./gpu_cuda_tests --gtest_filter="$N" > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED)" $OUT/memcheck.log
timeout 60 compute-sanitizer --tool racecheck --racecheck-report all ./gpu_cuda_tests --gtest_filter="$N" > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|^\[  (PASSED|FAILED)" $OUT/racecheck.log
G='CudaGl.DevicePicture*:CudaGl.PlayerHandOff*'
J2K_HANDOFF_FRAMES=25 timeout 150 compute-sanitizer --tool memcheck ./gpu_gl_tests --gtest_filter="$G" > $OUT/memcheck_gl.log 2>&1; echo "memcheck gl rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/memcheck_gl.log
timeout 100 compute-sanitizer --tool racecheck --racecheck-report all ./gpu_gl_tests --gtest_filter='CudaGl.DevicePicture*' > $OUT/racecheck_gl.log 2>&1; echo "racecheck gl rc=$?"; grep -E "RACECHECK SUMMARY|^\[  (PASSED|FAILED)" $OUT/racecheck_gl.log
