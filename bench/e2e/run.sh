#!/usr/bin/env bash
# End-to-end benchmark: j2ksend -> j2kprobe over loopback multicast, one case after another,
# reporting per case: frames sent / decoded / degraded / dropped, decoding capacity, latency
# (last packet received -> decoded) percentiles, CPU cores used and peak RSS of the probe.
#
# Works from a build tree or from a bundle directory (binaries + libraries):
#   bench/e2e/run.sh                                     # build/release/bin, default matrix
#   bench/e2e/run.sh --bin /opt/j2k/bin --cases 2160p50_400,1080p50_150 --duration 60
#   LD_LIBRARY_PATH=/opt/j2k/lib bench/e2e/run.sh --bin /opt/j2k/bin --probe-args '--backend cuda'
#   (the GPU machine from a bundle: bench/e2e/device.sh)
# Cases are NAME (see CASES below). Content: a real photograph (the sender's default,
# flower.png, or --image FILE|DIR), 4:2:2 10-bit, lossy 9/7 at the case's bit rate.
# Run it inside a network namespace of its own when other programs use the same groups.
# --probe-cpus LIST / --send-cpus LIST pin the probe / the sender to those CPUs (taskset -c):
# a 4-core laptop on a 16-core machine is `--probe-cpus 0-3 --send-cpus 4-15`.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
bin="${here}/../../build/release/bin"
out="./e2e-results"
duration=60
probe_pin=()
send_pin=()
cases="1080i50_150"
probe_args=""
send_args=""
cache_dir="${HOME}/.cache/j2kplay"
iface="127.0.0.1"

# NAME  SIZE  FPS  INTERLACE(-|I1|I2)  BITRATE
CASES="
1080p50_100 1920x1080 50 - 100M
1080p50_150 1920x1080 50 - 150M
1080p50_300 1920x1080 50 - 300M
1080i50_150 1920x1080 25 I1 150M
1080i50_300 1920x1080 25 I1 300M
2160p50_200 3840x2160 50 - 200M
2160p50_400 3840x2160 50 - 400M
"

usage() { sed -n '2,15p' "$0"; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --cases) cases="$2"; shift 2 ;;
    --probe-args) probe_args="$2"; shift 2 ;;
    --send-args) send_args="$2"; shift 2 ;;
    --cache-dir) cache_dir="$2"; shift 2 ;;
    --probe-cpus) probe_pin=(taskset -c "$2"); shift 2 ;;
    --send-cpus) send_pin=(taskset -c "$2"); shift 2 ;;
    --all) cases="$(echo "$CASES" | awk 'NF {print $1}' | paste -sd, -)"; shift ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
for tool in j2ksend j2kprobe; do
  [[ -x "${bin}/${tool}" ]] || { echo "no ${bin}/${tool} (use --bin DIR)" >&2; exit 2; }
done
time_bin="${TIME_BIN:-/usr/bin/time}"
[[ -x "$time_bin" ]] || { echo "$time_bin is needed for CPU and peak RSS (apt install time, or TIME_BIN=...)" >&2; exit 2; }
mkdir -p "$out"

summary="${out}/summary.md"
{
  echo "| case | frames sent | decoded | degraded | dropped (late) | failed | capacity fps | latency p50 / p95 / p99 ms | cores used | peak RSS MiB | workers x threads |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} > "$summary"

n=0
for name in ${cases//,/ }; do
  line="$(echo "$CASES" | awk -v n="$name" '$1 == n')"
  [[ -n "$line" ]] || { echo "unknown case $name" >&2; exit 2; }
  read -r _ size fps interlace bitrate <<< "$line"
  frames=$(( fps * duration ))
  n=$(( n + 1 ))
  group="239.77.0.${n}:$(( 5100 + 2 * n ))"
  url="rtp://${group}?iface=${iface}"
  il=""; [[ "$interlace" != "-" ]] && il="--interlaced ${interlace}"
  echo "== ${name}: ${size} ${fps} fps ${interlace} ${bitrate}, ${frames} frames; load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" | tee -a "${out}/machine.txt" >&2

  # The sender's loop is encoded (and cached) first, so that the stream runs at its real rate
  # from its first frame; then the probe, and the sender once the probe says it is listening.
  "${bin}/j2ksend" --to "rtp://127.0.0.1:9" --size "$size" --fps "$fps" --bits 10 --chroma 422 --bitrate "$bitrate" ${il} \
    --loop-frames "$fps" --frames 1 --no-rtcp --cache-dir "$cache_dir" ${send_args} > "${out}/${name}.encode.log" 2>&1 \
    || echo "encoding the loop failed (see ${out}/${name}.encode.log)" >&2
  "$time_bin" -v -o "${out}/${name}.time" ${probe_pin[@]+"${probe_pin[@]}"} \
    "${bin}/j2kprobe" "$url" --json --quiet --frames "$frames" --duration $(( duration + 30 )) --wait 120 --timeout 900 ${probe_args} \
    > "${out}/${name}.json" 2> "${out}/${name}.probe.log" &
  probe=$!
  for _ in $(seq 1 6000); do
    grep -q "listening on" "${out}/${name}.probe.log" 2>/dev/null && break
    kill -0 "$probe" 2>/dev/null || break
    sleep 0.01
  done
  ${send_pin[@]+"${send_pin[@]}"} "${bin}/j2ksend" --to "$url" --size "$size" --fps "$fps" --bits 10 --chroma 422 --bitrate "$bitrate" ${il} \
    --loop-frames "$fps" --frames "$frames" --cache-dir "$cache_dir" ${send_args} \
    > "${out}/${name}.send.log" 2>&1 || echo "sender failed (see ${out}/${name}.send.log)" >&2
  wait "$probe" || echo "probe exited with $? (see ${out}/${name}.probe.log)" >&2

  python3 - "$name" "$frames" "${out}/${name}.json" "${out}/${name}.time" >> "$summary" <<'PY'
import json, re, sys
name, frames, jpath, tpath = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    s = json.load(open(jpath))
except Exception as e:
    print(f"| {name} | {frames} | probe gave no JSON ({e}) |||||||||")
    sys.exit(0)
t = open(tpath).read()
def field(label):
    m = re.search(re.escape(label) + r":\s*([0-9.:]+)", t)
    return m.group(1) if m else "0"
def seconds(v):
    parts = [float(p) for p in v.split(":")]
    x = 0.0
    for p in parts: x = x * 60 + p
    return x
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
# Cores over the stream's duration (first packet to stop): the wait while the sender
# encodes its loop costs no CPU, start-up very little.
wall = s.get("duration_s", 0) or seconds(field("Elapsed (wall clock) time (h:mm:ss or m:ss)"))
rss = int(field("Maximum resident set size (kbytes)")) / 1024
f = s["frames"]; d = s.get("decoders", {}); lat = s.get("latency", {}).get("receive_to_decoded_ms", {})
workers = d.get("workers", 0)
cap = d.get("capacity_fps", f.get("decode_fps_per_worker", 0) * workers)
cores = cpu / wall if wall > 0 else 0
print(f"| {name} | {frames} | {f['decoded']} | {f.get('degraded', 0)} | {f['dropped_decoder_behind'] + f.get('dropped_late', 0)} ({f.get('dropped_late', 0)}) "
      f"| {f['decode_failed']} | {cap:.1f} | {lat.get('p50', 0):.0f} / {lat.get('p95', 0):.0f} / {lat.get('p99', 0):.0f} "
      f"| {cores:.2f} | {rss:.0f} | {workers} x {d.get('threads', d.get('threads_per_decode', 0))} |")
PY
  tail -1 "$summary" >&2
done
echo >&2
cat "$summary"
