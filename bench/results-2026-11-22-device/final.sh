#!/bin/bash
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib J2K_GPU_CORPUS=$PWD/corpus
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat /proc/loadavg
timeout 120 ./gpu_cuda_tests > $OUT/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" $OUT/tests.log | head
timeout 120 compute-sanitizer --tool racecheck --racecheck-report all ./gpu_cuda_tests --gtest_filter='CudaPhoto.DecoderDisplayPath*:CudaDisplay.*:DevicePool.*' > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|^\[  (PASSED|FAILED)" $OUT/racecheck.log
timeout 120 compute-sanitizer --tool memcheck --leak-check full ./gpu_cuda_tests --gtest_filter='CudaPhoto.*:DevicePool.*' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED)" $OUT/memcheck.log
(for f in gl/*.deb; do dpkg -x $f /; done; ldconfig
 export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
 timeout 90 ./gpu_gl_tests > $OUT/gl.log 2>&1; echo "gl rc=$?"; grep -E "^\[  (PASSED|FAILED)|OK \]" $OUT/gl.log)
timeout 150 bash ../.device-scaling/device_scaling.sh $PWD/../.device-scaling 20 "1 2 16" > $OUT/scaling.log 2>&1; echo "scaling rc=$?"; grep -E "^(own |openjpeg|opj|==|#)" $OUT/scaling.log | cut -c1-200
