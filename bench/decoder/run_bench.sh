#!/bin/bash
# Reproduces the "Decoder" figures of bench/RESULTS.md.
#   bench/decoder/run_bench.sh [build dir] [runs]
# Writes the two benchmark codestreams (flower.png crops), then decodes each with our
# decoder and OpenJPEG (library, through j2kdecode --backend) on 1 and 2 threads, and
# with the opj_decompress / grk_decompress tools. Best and mean of `runs` decodes.
set -euo pipefail
BUILD=${1:-build/release}
RUNS=${2:-10}
DIR=$(mktemp -d)
"$BUILD/bin/decoder_bench" --write-inputs="$DIR"
for f in lossy_1080_422_10bit lossless_1080_rgb8; do
  in="$DIR/$f.j2k"
  echo "== $f ($(stat -c %s "$in") bytes)"
  for t in 1 2; do
    for b in own openjpeg; do
      echo "-- $b, $t thread(s)"
      /usr/bin/time -f "   peak RSS %M KiB, %U s user, %e s wall" "$BUILD/bin/j2kdecode" "$in" --backend $b --threads $t --bench "$RUNS" 2>&1 | sed 's/^/   /'
    done
    echo "-- opj_decompress -threads $t (tool, includes writing the output)"
    /usr/bin/time -f "   peak RSS %M KiB, %e s wall" opj_decompress -i "$in" -o "$DIR/out_opj.raw" -threads $t 2>&1 | grep -E "decode time|RSS" | sed 's/^/   /'
    echo "-- grk_decompress -H $t (tool, includes writing the output)"
    /usr/bin/time -f "   peak RSS %M KiB, %e s wall" grk_decompress -i "$in" -o "$DIR/out_grk.raw" -H $t 2>&1 | grep -E -i "decompress time|RSS|ms" | sed 's/^/   /'
  done
done
rm -rf "$DIR"
