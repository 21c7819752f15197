#!/usr/bin/env bash
# Per-frame decode cost, live (j2kprobe) vs j2kdecode --bench on the same codestreams, and
# the workers x threads matrix that chose the pipeline's defaults (issue 12).
#
# Usage (in a network namespace of its own):
#   BIN=DIR CACHE=DIR OUT=DIR bench/e2e/decode_cost.sh
# Optional: SEND="j2ksend options" (default 1080i50 4:2:2 10-bit 150 Mbit/s), FRAMES=100,
#   MATRIX="1x1 1x2 2x2 ..." (workers x threads), BENCH_THREADS="1 2", REPS=20.
# For each WxT it prints the live figures of the probe's --json (wall ms per frame, thread
# work and CPU ms per frame, capacity frames/s, receive->decoded p50/p99, frames decoded/dropped),
# live with --degrade off so that every frame decoded is a full-resolution one.
set -u
B=${BIN:-$(cd "$(dirname "$0")/../../build/release/bin" && pwd)}
C=${CACHE:-$HOME/.cache/j2kplay}
O=${OUT:-/tmp/j2k-decode-cost}
N=${FRAMES:-100}
SEND=${SEND:-"--size 1920x1080 --fps 25 --bits 10 --chroma 422 --bitrate 150M --interlaced I1 --loop-frames 25"}
MATRIX=${MATRIX:-"1x1 1x2 2x1 2x2 3x2"}
REPS=${REPS:-20}
URL='rtp://239.77.1.1:5300?iface=127.0.0.1'
rm -rf "$O"; mkdir -p "$O/dump"

probe() {  # name, frames, probe args...
  local name=$1 n=$2; shift 2
  "$B/j2kprobe" "$URL" --json --quiet --frames "$n" --wait 900 --timeout 120 "$@" > "$O/$name.json" 2> "$O/$name.err" &
  local p=$!
  for _ in $(seq 1 3000); do grep -q "listening on" "$O/$name.err" && break; sleep 0.01; done
  # shellcheck disable=SC2086
  "$B/j2ksend" --to "$URL" $SEND --frames "$n" --cache-dir "$C" > "$O/$name.send" 2>&1
  wait $p
}

report() {  # name, frames
  python3 - "$O/$1.json" "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); f = s["frames"]; d = s["decoders"]; l = s["latency"]["receive_to_decoded_ms"]
print(f"| {sys.argv[2]} | {d['workers']} x {d['threads']} | {f['decoded']} / {sys.argv[3]} | {f['dropped_decoder_behind'] + f.get('dropped_late', 0)} "
      f"| {f['decode_ms_mean']:.1f} | {f['decode_work_ms_mean']:.1f} | {f['decode_cpu_ms_mean']:.1f} | {d['capacity_fps']:.1f} "
      f"| {l['p50']:.0f} / {l['p99']:.0f} |")
PY
}

echo "load before: $(cat /proc/loadavg) on $(nproc) cores"
probe dump 6 --no-drop --dump "$O/dump" --workers 1 --threads 1
ls "$O/dump" | grep -c j2c | sed 's/^/codestreams dumped: /'
# The bench on one frame's codestreams (a frame, or its two fields).
frame=$(ls "$O/dump" | grep -m1 '^frame_000003.*\.j2c$' | sed 's/_[01]\?\.j2c$//; s/\.j2c$//')
# Wall time: the bench's mean. CPU time: GNU time's user + sys of REPS + 1 decodes minus that
# of one decode (start-up, reading, the first, cold decode cancel out), over REPS.
cpu_of() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'; }
for t in ${BENCH_THREADS:-1 2}; do
  wall=0; cpu=0
  for cs in "$O/dump/${frame}"*.j2c; do
    ms=$("$B/j2kdecode" "$cs" --bench "$REPS" --threads "$t" | awk '/ms\/frame mean/ {print $1; exit}')
    c1=$(cpu_of "$B/j2kdecode" "$cs" --bench 1 --threads "$t")
    cn=$(cpu_of "$B/j2kdecode" "$cs" --bench $((REPS + 1)) --threads "$t")
    c=$(python3 -c "print(round(($cn - $c1) * 1000 / $REPS, 1))")
    echo "j2kdecode $(basename "$cs") --bench $REPS --threads $t: wall $ms ms, CPU $c ms per codestream"
    wall=$(python3 -c "print($wall + ${ms:-0})"); cpu=$(python3 -c "print($cpu + $c)")
  done
  echo "j2kdecode --threads $t, one frame: wall $wall ms, CPU $cpu ms"
done
echo
echo "| run | workers x threads | decoded | dropped | wall ms/frame | work ms/frame | CPU ms/frame | capacity fps | latency p50 / p99 ms |"
echo "|---|---|---|---|---|---|---|---|---|"
for wt in $MATRIX; do
  w=${wt%x*}; t=${wt#*x}
  probe "w${w}t${t}" "$N" --workers "$w" --threads "$t" --degrade off
  report "w${w}t${t}" "$N"
done
echo "load after: $(cat /proc/loadavg)"
