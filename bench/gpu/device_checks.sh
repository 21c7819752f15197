#!/bin/bash
# Final run: tests, GL hand-off, compute-sanitizer (memcheck, racecheck, synccheck, initcheck).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib J2K_GPU_CORPUS=$PWD/corpus
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 ./gpu_cuda_tests > $OUT/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" $OUT/tests.log | head
for f in gl/*.deb; do dpkg -x $f /; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
timeout 60 ./gpu_gl_tests > $OUT/gl.log 2>&1; echo "gl rc=$?"; grep -E "info|OK|FAILED|SKIPPED" $OUT/gl.log | head
S="CudaPlanar.EveryLevel*:CudaPlanar.Subsampling*:CudaPlanar.Narrow*:CudaPlanar.Slots*:CudaDisplay.*:CudaColour.Grey*:CudaColour.FieldWeave*"
timeout 240 compute-sanitizer --tool memcheck --leak-check full ./gpu_cuda_tests > $OUT/memcheck.log 2>&1; echo "memcheck (all tests) rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/memcheck.log
timeout 150 compute-sanitizer --tool racecheck --racecheck-report all ./gpu_cuda_tests --gtest_filter="$S" > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/racecheck.log
timeout 80 compute-sanitizer --tool synccheck ./gpu_cuda_tests --gtest_filter="$S" > $OUT/synccheck.log 2>&1; echo "synccheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/synccheck.log
timeout 80 compute-sanitizer --tool initcheck ./gpu_cuda_tests --gtest_filter="CudaPlanar.EveryLevel*:CudaDisplay.*" > $OUT/initcheck.log 2>&1; echo "initcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/initcheck.log; grep -m2 -A6 "Uninitialized" $OUT/initcheck.log
