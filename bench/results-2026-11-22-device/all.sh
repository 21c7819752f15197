#!/bin/bash
# One batch on the GPU machine (01:30 UTC run): GPU tests, memcheck on the decoder paths,
# GL hand-off tests, end-to-end 16-thread benchmark, thread scaling of the CPU decoder.
# Bundles: bench/gpu/make_device_bundle.sh (.device) and bench/decoder/make_scaling_bundle.sh
# (.device-scaling); copy this file into .device and run with both carried.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib J2K_GPU_CORPUS=$PWD/corpus
B=corpus/bench
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; cat /proc/loadavg
timeout 120 ./gpu_cuda_tests > $OUT/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" $OUT/tests.log | head
timeout 150 compute-sanitizer --tool memcheck --leak-check full ./gpu_cuda_tests --gtest_filter='CudaPhoto.*:DevicePool.*' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|^\[  (PASSED|FAILED)" $OUT/memcheck.log
(for f in gl/*.deb; do dpkg -x $f /; done; ldconfig
 export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
 J2K_HANDOFF_FRAMES=100 timeout 90 ./gpu_gl_tests > $OUT/gl.log 2>&1; echo "gl rc=$?"; grep -E "info|OK \]|FAILED|PASSED" $OUT/gl.log | head -20)
for be in own cuda cuda-display; do /usr/bin/time -v timeout 60 ./gpu_stage_bench --backend $be --threads 16 --frames 30 $B/photo_1080_422_10_97.j2k $B/photo_2160_422_10_97.j2k > $OUT/e2e_$be.log 2>&1; grep -E "backend|Maximum resident" $OUT/e2e_$be.log; done
for f in photo_1080_422_10_97 photo_2160_422_10_97; do
  for i in $(seq 12); do LD_LIBRARY_PATH=$PWD/opjlib:$PWD/lib ./opj_decompress -i $B/$f.j2k -o /tmp/o.raw -threads 16 2>&1 | grep "decode time"; done > $OUT/opj_$f.log
  echo "opj_decompress -threads 16 $f: median $(awk '{print $3}' $OUT/opj_$f.log | sort -n | sed -n 6p) ms of 12 (min $(awk '{print $3}' $OUT/opj_$f.log | sort -n | head -1))"
done
timeout 200 bash ../.device-scaling/device_scaling.sh $PWD/../.device-scaling 20 "1 2 4 8 16" > $OUT/scaling.log 2>&1; echo "scaling rc=$?"; cat $OUT/scaling.log | cut -c1-220
