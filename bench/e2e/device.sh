#!/usr/bin/env bash
# The end-to-end benchmark's GPU-machine rows (issue 12) from a bundle of the tools:
#
#   here:        bash bench/ui/make_player_bundle.sh build/release .device-e2e
#   the device:  bash bench/e2e/device.sh .device-e2e "$OUT"        (carry .device-e2e)
#
# Runs bench/e2e/run.sh for CASES (default 2160p50_400,1080p50_150) for DURATION seconds
# (default 60), the sender's loops encoded first (cached under /tmp/j2k-e2e) so that each
# case streams at its real rate. WORKERS="2 4 8 16" repeats the cases once per --workers
# value (the workers x threads measurement); PROBE_ARGS adds probe options (e.g.
# '--tier1 gpu'), SEND_ARGS sender options (e.g. '--tile-parts'), PROBE_CPUS / SEND_CPUS pin
# them (run.sh --probe-cpus / --send-cpus: e.g. PROBE_CPUS=0-3 SEND_CPUS=4-15, a 4-core laptop). What comes back under OUT: summary.md (the table), machine.txt, and the
# probes' JSON and logs as one tarball.
set -uo pipefail
bundle="$1"
final="$2"
cases="${CASES:-2160p50_400,1080p50_150}"
duration="${DURATION:-60}"
root="${ROOT:-/tmp/j2k-player}"  # where the bundle is unpacked
out="${ROOT:-/tmp/j2k-player}-e2e"
mkdir -p "$root" "$out" "$final"
tar -C "$root" -xJf "$bundle/player.tar.xz"
export LD_LIBRARY_PATH="$root/lib"
here="$(cd "$(dirname "$0")/../.." && pwd)"
{ nproc; nvidia-smi -L 2>/dev/null; cat /proc/loadavg; } > "$final/machine.txt"

run_cases() {  # tag, extra probe options
  local tag="$1" extra="$2"
  TIME_BIN="$root/bin/time" bash "$here/bench/e2e/run.sh" --bin "$root/bin" --cases "$cases" --duration "$duration" \
    --out "$out/$tag" --cache-dir /tmp/j2k-e2e --probe-args "${PROBE_ARGS:-} $extra" --send-args "${SEND_ARGS:-}" \
    ${PROBE_CPUS:+--probe-cpus "$PROBE_CPUS"} ${SEND_CPUS:+--send-cpus "$SEND_CPUS"} 2>&1 | tail -4
  sed "s/^| \([0-9a-z_]*\) |/| \1 ($tag) |/" "$out/$tag/summary.md" | tail -n +3 >> "$final/summary.md"
}
echo "| case | frames sent | decoded | degraded | dropped (late) | failed | capacity fps | latency p50 / p95 / p99 ms | cores used | peak RSS MiB | workers x threads |" > "$final/summary.md"
echo "|---|---|---|---|---|---|---|---|---|---|---|" >> "$final/summary.md"
if [ -n "${WORKERS:-}" ]; then
  for w in $WORKERS; do run_cases "w$w" "--workers $w"; done
else
  run_cases default ""
fi
cat "$final/summary.md"
tar -C "$out" -czf "$final/e2e-logs.tar.gz" .
