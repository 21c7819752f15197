#!/bin/bash
# Correctness on the GPU machine: tests, compute-sanitizer (memcheck, racecheck, synccheck,
# initcheck), the GL hand-off through headless EGL. Logs under $OUT.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib J2K_GPU_CORPUS=$PWD/corpus
B=corpus/bench
date -u
timeout 120 ./gpu_cuda_tests > $OUT/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected|  Actual" $OUT/tests.log | head
timeout 240 compute-sanitizer --tool memcheck --leak-check full ./gpu_cuda_tests > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/memcheck.log
S="CudaPlanar.EveryLevel*:CudaPlanar.Subsampling*:CudaPlanar.Narrow*:CudaPlanar.Slots*:CudaDisplay.*:CudaColour.Grey*:CudaColour.FieldWeave*"
timeout 150 compute-sanitizer --tool racecheck --racecheck-report all ./gpu_cuda_tests --gtest_filter="$S" > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|^\[  (PASSED|FAILED)" $OUT/racecheck.log
timeout 80 compute-sanitizer --tool synccheck ./gpu_cuda_tests --gtest_filter="$S" > $OUT/synccheck.log 2>&1; echo "synccheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/synccheck.log
timeout 80 compute-sanitizer --tool initcheck ./gpu_cuda_tests --gtest_filter="CudaPlanar.EveryLevel*:CudaDisplay.*" > $OUT/initcheck.log 2>&1; echo "initcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/initcheck.log
for f in gl/*.deb; do dpkg -x $f /; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
timeout 60 ./gpu_gl_tests > $OUT/gl.log 2>&1; echo "gl rc=$?"; grep -E "info|OK|FAILED|SKIPPED" $OUT/gl.log | head
