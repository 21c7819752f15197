#!/usr/bin/env bash
# On the GPU machine: the HDR display mapping on the device. gpu_cuda_tests' colour tests (the
# CUDA kernel against the CPU twin, PQ and HLG among them) with compute-sanitizer's memcheck
# on the HDR test, then j2kplay's own window (eglfs, the CUDA display path) on j2ksend --hdr pq
# and --hdr hlg streams: the window's picture against the CPU path's picture of the same frame.
#
#   bash bench/ui/device_hdr.sh BUNDLE_DIR OUT   (BUNDLE_DIR: make_player_bundle.sh's, with
#   gpu_cuda_tests copied into it; run from the repository root)
set -uo pipefail
bundle="$1"
final="$2"
out=/tmp/j2k-hdr
mkdir -p "$out" "$final"
J2K_EGLDEVICE_SIZE=960x540
. "$(dirname "$0")/eglfs_env.sh"
# The tests find the photographs where they were built.
media_dir="$(grep -aoE '/[A-Za-z0-9_./-]*/app/media/data' "$bundle/gpu_cuda_tests" | head -1)"
if [ -n "$media_dir" ] && [ ! -e "$media_dir" ]; then mkdir -p "$(dirname "$media_dir")" && ln -s "$(pwd)/app/media/data" "$media_dir"; fi
nvidia-smi -L || true
"$bundle/gpu_cuda_tests" --gtest_filter='CudaColour.*' 2>&1 | tee "$out/gpu_cuda_tests.log" | tail -5
compute-sanitizer --tool memcheck "$bundle/gpu_cuda_tests" --gtest_filter='CudaColour.Hdr*' >"$out/memcheck.log" 2>&1
echo "memcheck: exit $? — $(grep -E 'ERROR SUMMARY' "$out/memcheck.log")"

port=5500
for t in pq hlg; do
  port=$((port + 2))
  send=("$root/bin/j2ksend" --image "$(pwd)/app/media/data/flower.png" --size 960x540 --fps 25 --bits 10 --hdr "$t"
        --bitrate 40M --loop-frames 10 --cache-dir /tmp/j2k-cache)
  "${send[@]}" --to rtp://127.0.0.1:9 --frames 1 --no-rtcp >"$out/encode-$t.log" 2>&1
  "${send[@]}" --to "rtp://127.0.0.1:$port" --loop >"$out/send-$t.log" 2>&1 &
  sender=$!
  timeout 120 "$root/bin/j2kplay" "rtp://127.0.0.1:$port" --gpu on --audio off --screenshot "$out/$t.png" \
    --quit-after 3 --window-size 960x540 --no-overlay --degrade off --json >"$out/$t.json" 2>"$out/$t.log"
  echo "$t: exit $?"
  kill -INT "$sender" 2>/dev/null; wait "$sender" 2>/dev/null
  grep -E "display path|picture descriptor" "$out/$t.log" | sed 's/^/  /'
done
tar -C "$out" -czf "$final/logs.tar.gz" --exclude='*.png' .
tar -C "$out" -cf "$final/pictures.tar" pq.png pq.png.cpu.png hlg.png hlg.png.cpu.png
ls -la "$final"
