#!/bin/bash
# GPU tier-1 (issue 15) on the GPU machine: tests, compute-sanitizer, benchmarks (bench/RESULTS.md,
# "GPU tier-1"). Bundle with make_device_tier1_bundle.sh; logs under $OUT.
#   BASELINES=1  also the CPU tier-1, the own CPU decoder and opj_decompress on the same frames
#   NCU=1        also Nsight Compute (--set full) on one tier-1 launch of the 1080 and 2160 frames
#   SANITIZE=0   skip compute-sanitizer
#   TP_WORKERS="2 4"  --workers values of the throughput runs
#   SPIN=1       also the cuda-display runs with --spin-wait (the waiting thread spins on a core)
#   T1HOST="-1 0"  --tier1-host values of the cuda-display runs (hybrid tier-1: -1 the cost
#                model's split, 0 every code-block on the GPU, K the K heaviest on the CPU)
cd "$(dirname "$0")"
[ -f libs.tar.xz ] && tar xJf libs.tar.xz --strip-components=1 -C lib  # Qt and the rest (make_device_tier1_bundle.sh)
export LD_LIBRARY_PATH=$PWD/lib J2K_GPU_CORPUS=$PWD/corpus J2K_TIER1_CORPUS=$PWD/t1corpus
B=corpus/bench
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nproc
timeout 240 ./gpu_cuda_tests > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|Expected|  Actual|Which is|info|differs|block " $OUT/tests.log | head -60
if [ "${SANITIZE:-1}" = 1 ]; then
  # (GpuSlots.AFailedCollect* provokes cudaSetDevice errors on purpose and
  # GpuTier1Backend.AutoModeTries* out-of-memory errors, which memcheck counts as API errors:
  # the latter runs apart with those not reported.)
  T="GpuTier1.*:GpuTier1Hybrid.*:GpuSlots.Decoders*:GpuTier1Backend.*:Tier1Table.TablesThatLie*-GpuTier1Backend.AutoModeTries*"
  timeout 200 compute-sanitizer --tool memcheck ./gpu_cuda_tests --gtest_filter="$T" > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/memcheck.log
  timeout 100 compute-sanitizer --tool memcheck --report-api-errors no ./gpu_cuda_tests --gtest_filter="GpuTier1Backend.AutoModeTries*" > $OUT/memcheck_oom.log 2>&1; echo "memcheck (out of memory on purpose) rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/memcheck_oom.log
  R="GpuTier1.SmallBatch*:GpuTier1Hybrid.SmallBatch*"
  timeout 100 compute-sanitizer --tool racecheck --racecheck-report all ./gpu_cuda_tests --gtest_filter="$R" > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/racecheck.log
  timeout 60 compute-sanitizer --tool synccheck ./gpu_cuda_tests --gtest_filter="$R" > $OUT/synccheck.log 2>&1; echo "synccheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)" $OUT/synccheck.log
fi
FRAMES=${FRAMES:-"photo_1080_422_10_97 photo_2160_422_10_97_8m photo_1080_rgb_8_53 photo_2160_422_10_97"}
for f in $FRAMES; do
  for k in ${T1HOST:--1 0}; do
    timeout 60 ./gpu_stage_bench --backend cuda-display --tier1 gpu --tier1-host $k --threads 16 --frames 150 $B/$f.j2k > $OUT/t1gpu_k${k}_$f.log 2>&1; grep -vE "^device|peak" $OUT/t1gpu_k${k}_$f.log
    if [ "${SPIN:-0}" = 1 ]; then
      timeout 60 ./gpu_stage_bench --backend cuda-display --tier1 gpu --tier1-host $k --spin-wait --threads 16 --frames 150 $B/$f.j2k > $OUT/t1gpu_spin_k${k}_$f.log 2>&1; echo "--spin-wait:"; grep -vE "^device|peak" $OUT/t1gpu_spin_k${k}_$f.log | head -2
    fi
  done
done
for f in $FRAMES; do
  for w in ${TP_WORKERS:-2 4}; do
    for k in -1 0; do
      timeout 60 ./gpu_stage_bench --backend throughput --tier1 gpu --tier1-host $k --workers $w --threads 1 --frames 100 $B/$f.j2k > $OUT/t1gpu_tp${w}_k${k}_$f.log 2>&1; echo "--tier1-host $k"; grep -vE "^device|peak" $OUT/t1gpu_tp${w}_k${k}_$f.log | tail -2
    done
  done
done
if [ "${BASELINES:-0}" = 1 ]; then
  for f in $FRAMES; do
    timeout 60 ./gpu_stage_bench --backend cuda-display --tier1 cpu --threads 16 --frames 150 $B/$f.j2k > $OUT/t1cpu_$f.log 2>&1; grep -E "backend" $OUT/t1cpu_$f.log
    timeout 60 ./gpu_stage_bench --backend own --threads 16 --frames 120 $B/$f.j2k > $OUT/own_$f.log 2>&1; grep -E "backend" $OUT/own_$f.log
    for i in $(seq 101); do LD_LIBRARY_PATH=$PWD/opjlib:$PWD/lib timeout 10 ./opj_decompress -i $B/$f.j2k -o /tmp/o.raw -threads 16 2>&1 | grep "decode time"; done > $OUT/opj_$f.log
    echo "opj_decompress -threads 16 $f: median $(awk '{print $3}' $OUT/opj_$f.log | sort -n | sed -n 51p) ms of $(wc -l < $OUT/opj_$f.log) runs"
  done
fi
if [ "${NCU:-0}" = 1 ]; then
  NCU_BIN=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  echo "ncu: ${NCU_BIN:-none}"
  if [ -n "$NCU_BIN" ]; then
    for f in ${NCU_FRAMES:-photo_1080_422_10_97 photo_2160_422_10_97}; do
      timeout 150 $NCU_BIN --set full --import-source yes -k regex:tier1_kernel -s 2 -c 1 -o $OUT/ncu_$f \
        ./gpu_stage_bench --backend cuda-display --tier1 gpu --threads 16 --frames 4 $B/$f.j2k > $OUT/ncu_run_$f.log 2>&1
      echo "ncu $f rc=$?"
      $NCU_BIN -i $OUT/ncu_$f.ncu-rep --print-details all > $OUT/ncu_$f.txt 2>&1
      $NCU_BIN -i $OUT/ncu_$f.ncu-rep --page source --csv --print-source sass > $OUT/ncu_sass_$f.csv 2>&1
      grep -E "Duration|Elapsed Cycles|SM Frequency|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Dynamic Shared" $OUT/ncu_$f.txt | head -30
    done
  fi
fi
date -u
