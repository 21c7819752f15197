#!/usr/bin/env bash
# On the GPU machine: j2kplay's own window (eglfs on NVIDIA's device EGL, the CUDA-GL display
# path) on a live 1080i50 stream from j2ksend on loopback, with each deinterlacing mode. Per
# mode: the GPU time of the texture update + field pass + draw (GL timer queries, median),
# pictures shown per second, late / repeated / skipped, and a screenshot with the field's
# files (FILE.field.png, .frame.png, .previous.png, .field.json) for the CPU reference check
# (field_check, run there when the bundle dir holds it, else here on what comes back).
# What comes back: OUT/logs.tar.gz (every log and JSON) and OUT/adaptive-field.tar (the
# adaptive run's field files).
#
#   bash bench/ui/device_deinterlace.sh BUNDLE_DIR OUT [SECONDS]   (BUNDLE_DIR from make_player_bundle.sh,
#   plus build/release/bin/field_check copied into it)
set -uo pipefail
bundle="$1"
final="$2"
out=/tmp/j2k-deinterlace
seconds="${3:-6}"
mkdir -p "$out"
J2K_EGLDEVICE_SIZE=1920x1080
. "$(dirname "$0")/eglfs_env.sh"
nvidia-smi -L || true
image="$(pwd)/app/media/data/flower.png"  # run from the repository root
send=("$root/bin/j2ksend" --image "$image" --size 1920x1080 --fps 25 --bits 10 --interlaced I1 --bitrate 150M
      --loop-frames 50 --cache-dir /tmp/j2k-cache)
# Encode the loop once (cached), before any timing.
"${send[@]}" --to rtp://127.0.0.1:9 --frames 1 --no-rtcp >"$out/encode.log" 2>&1

port=5300
for mode in adaptive bob off; do
  port=$((port + 2))
  "${send[@]}" --to "rtp://127.0.0.1:$port" --loop >"$out/send-$mode.log" 2>&1 &
  sender=$!
  timeout 120 "$root/bin/j2kplay" "rtp://127.0.0.1:$port" --gpu on --deinterlace "$mode" --audio off \
    --screenshot "$out/$mode.png" --quit-after "$seconds" --window-size 1920x1080 --no-overlay --json \
    >"$out/$mode.json" 2>"$out/$mode.log"
  echo "$mode: exit $?"
  kill -INT "$sender" 2>/dev/null; wait "$sender" 2>/dev/null
  grep -E "OpenGL|display path|GPU time|paced by|interlaced|deinterlac" "$out/$mode.log" | sed 's/^/  /'
  grep -E '"(shown|fields_shown|late|repeated|skipped|decoded|dropped_late|degraded)"' "$out/$mode.json" | tr -d ' \n'; echo
done

for mode in adaptive bob; do
  [ -x "$bundle/field_check" ] && LD_LIBRARY_PATH="$root/lib" "$bundle/field_check" "$out/$mode.png" | tee "$out/field_check-$mode.txt"
done
mkdir -p "$final"
tar -C "$out" -czf "$final/logs.tar.gz" --exclude='*.png' .
tar -C "$out" -cf "$final/adaptive-field.tar" adaptive.png.field.png adaptive.png.frame.png adaptive.png.previous.png adaptive.png.field.json
ls -la "$final"
