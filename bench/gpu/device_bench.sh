#!/bin/bash
# Benchmarks on the GPU machine (bench/RESULTS.md, "GPU stage"). Logs under $OUT.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib J2K_GPU_CORPUS=$PWD/corpus
B=corpus/bench
date -u; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.current --format=csv,noheader; nproc
timeout 120 ./gpu_stage_bench --frames 200 $B/photo_1080_422_10_97.j2k $B/photo_1080_422_10_53.j2k $B/photo_2160_422_10_97.j2k > $OUT/bench.log 2>&1; grep -v "^device" $OUT/bench.log
timeout 90 ./gpu_stage_bench --backend zerocopy --frames 200 $B/photo_1080_422_10_97.j2k $B/photo_2160_422_10_97.j2k > $OUT/bench_zc.log 2>&1; grep "GPU median" $OUT/bench_zc.log
for be in own cuda cuda-display; do /usr/bin/time -v ./gpu_stage_bench --backend $be --threads 16 --frames 30 $B/photo_1080_422_10_97.j2k $B/photo_2160_422_10_97.j2k > $OUT/e2e_$be.log 2>&1; grep -E "backend|Maximum resident" $OUT/e2e_$be.log; done
for f in photo_1080_422_10_97 photo_2160_422_10_97; do
  for i in $(seq 12); do LD_LIBRARY_PATH=$PWD/opjlib:$PWD/lib ./opj_decompress -i $B/$f.j2k -o /tmp/o.raw -threads 16 2>&1 | grep "decode time"; done > $OUT/opj_$f.log
  echo "opj_decompress -threads 16 $f: median $(awk '{print $3}' $OUT/opj_$f.log | sort -n | sed -n 6p) ms of 12 runs (min $(awk '{print $3}' $OUT/opj_$f.log | sort -n | head -1))"
  /usr/bin/time -v env LD_LIBRARY_PATH=$PWD/opjlib:$PWD/lib ./opj_decompress -i $B/$f.j2k -o /tmp/o.raw -threads 16 2>&1 | grep -E "Maximum resident"
done
