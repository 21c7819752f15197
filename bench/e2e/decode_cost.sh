#!/usr/bin/env bash
# Per-frame decode cost: live (j2kprobe) vs j2kdecode --bench on the same codestreams.
# Usage (in a network namespace of its own): BIN=DIR CACHE=DIR OUT=DIR bench/e2e/decode_cost.sh
set -u
B=${BIN:-$(cd "$(dirname "$0")/../../build/release/bin" && pwd)}
C=${CACHE:-$HOME/.cache/j2kplay}
O=${OUT:-/tmp/pipeline-bench/m}
rm -rf $O; mkdir -p $O/dump
SEND="--size 1920x1080 --fps 25 --bits 10 --chroma 422 --bitrate 150M --interlaced I1 --loop-frames 25 --cache-dir $C"
probe() {  # name, frames, args...
  local name=$1 n=$2; shift 2
  $B/j2kprobe 'rtp://239.77.1.1:5300?iface=127.0.0.1' --json --quiet --frames $n --timeout 120 "$@" > $O/$name.json 2> $O/$name.err &
  local p=$!
  for _ in $(seq 1 3000); do grep -q "listening on" $O/$name.err && break; sleep 0.01; done
  $B/j2ksend --to 'rtp://239.77.1.1:5300?iface=127.0.0.1' $SEND --frames $n > $O/$name.send 2>&1
  wait $p
  python3 -c "import json;s=json.load(open('$O/$name.json'));f=s['frames'];print('$name', 'decoded',f['decoded'],'of',$n,'degraded',f['degraded'],'dropped',f['dropped_decoder_behind'],'decode_ms_mean %.1f'%f['decode_ms_mean'],'fps/worker %.1f'%f['decode_fps_per_worker'],'lat p50/p99',s['latency']['receive_to_decoded_ms']['p50'],s['latency']['receive_to_decoded_ms']['p99'])"
}
echo "load: $(cat /proc/loadavg)"
probe dump 6 --no-drop --dump $O/dump
ls $O/dump | head -4
for t in 1 2; do
  $B/j2kdecode $O/dump/frame_000003_0.j2c --bench 20 --threads $t | sed -n 1,2p
  $B/j2kdecode $O/dump/frame_000003_1.j2c --bench 20 --threads $t | sed -n 2p
done
probe w1t1 100 --workers 1 --threads 1 --degrade off
probe w1t2 100 --workers 1 --threads 2 --degrade off
probe w2t1 100 --workers 2 --threads 1 --degrade off
echo "load: $(cat /proc/loadavg)"
