#!/usr/bin/env bash
# The GPU machine's batch for the player and the live pipeline (issues 12, 15, 17), from the
# bundle of make_player_bundle.sh:
#   1. the player's own window on the GPU (GPU and CPU display paths), and the suite's
#      PlayerGpu test (what the widget drew against the CPU path's picture of the same frame);
#   2. display figures through the widget: 1080p50 at 150 Mbit/s and 2160p50 at 400 Mbit/s;
#   3. the end-to-end benchmark's GPU rows (bench/e2e/run.sh).
#   bash bench/ui/device_all.sh BUNDLE_DIR OUT
set -uo pipefail
bundle="$1"
final="$2"  # at most a few files come back: the logs as one tarball, the two pictures
out=/tmp/j2k-device-run
mkdir -p "$out"
here="$(cd "$(dirname "$0")/../.." && pwd)"
bash "$here/bench/ui/device_player.sh" "$bundle" "$out" 3
root=/tmp/j2k-player
export LD_LIBRARY_PATH="$root/lib" QT_PLUGIN_PATH="$root/plugins" QT_QPA_PLATFORM=eglfs
export QT_QPA_EGLFS_INTEGRATION=j2k_egldevice QT_QPA_EGLFS_DISABLE_INPUT=1 QT_QPA_EGLFS_HIDECURSOR=1
export FONTCONFIG_FILE="$root/fonts/fonts.conf" XDG_CACHE_HOME=/tmp/j2k-cache
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
cache=/tmp/j2k-cache/send
display_case() {  # name size fps bitrate port
  local name="$1" size="$2" fps="$3" rate="$4" port="$5"
  # Encode first (cached), so that the player measures a stream at its real rate.
  "$root/bin/j2ksend" --to "rtp://127.0.0.1:9" --size "$size" --fps "$fps" --bits 10 --bitrate "$rate" \
    --loop-frames 25 --frames 1 --no-rtcp --cache-dir "$cache" >"$out/$name.encode.log" 2>&1
  J2K_EGLDEVICE_SIZE="$size" timeout 120 "$root/bin/j2kplay" "rtp://127.0.0.1:$port" --gpu on --window-size "$size" \
    --no-overlay --quit-after 10 >"$out/$name.play.log" 2>&1 &
  local player=$!
  for _ in $(seq 100); do grep -q "listening on" "$out/$name.play.log" 2>/dev/null && break; sleep 0.1; done
  "$root/bin/j2ksend" --to "rtp://127.0.0.1:$port" --size "$size" --fps "$fps" --bits 10 --bitrate "$rate" \
    --loop-frames 25 --duration 14 --cache-dir "$cache" >"$out/$name.send.log" 2>&1
  wait "$player"
  echo "$name: $(grep -E 'display:|shown [0-9]+ frames|display path' "$out/$name.play.log" | tr '\n' ' ')"
}
display_case d1080p50_150 1920x1080 50 150M 6000
display_case d2160p50_400 3840x2160 50 400M 6010
if [ -x "$here/bench/e2e/run.sh" ]; then
  TIME_BIN="$root/bin/time" timeout 200 bash "$here/bench/e2e/run.sh" --bin "$root/bin" --cases 2160p50_400,1080p50_150 --duration 20 \
    --out "$out/e2e" --cache-dir /tmp/j2k-e2e 2>&1 | tail -12
fi
cp "$out/gpu.png" "$final/window-gpu.png" 2>/dev/null
cp "$out/gpu.png.cpu.png" "$final/window-gpu.cpu.png" 2>/dev/null
tar -C "$out" -czf "$final/logs.tar.gz" --exclude='*.png' --exclude='*.raw' .
