#!/bin/bash
# Thread scaling of the own decoder against OpenJPEG on the two benchmark frames (1080 4:2:2
# 10-bit 9/7 ~5 Mbit, 1080 RGB 8-bit 5/3 lossless), for a many-core machine without the
# build's libraries. Self-contained: run from (or point at) a folder made by
# make_scaling_bundle.sh, holding decoder_scaling, lib/ (libopenjp2, libfmt), the two .j2k
# files and, optionally, opj_decompress with opjlib/ and grk_decompress with grklib/.
#   bash device_scaling.sh [folder] [frames=30] [thread counts="1 2 4 8 16"]
set -uo pipefail
D=${1:-$(cd "$(dirname "$0")" && pwd)}
FRAMES=${2:-30}
THREADS=${3:-"1 2 4 8 16"}
export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "# $(date -u +%FT%TZ) $(uname -n): $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for f in lossy_1080_422_10bit lossless_1080_rgb8; do
  in="$D/$f.j2k"
  [ -f "$in" ] || { echo "missing $in"; continue; }
  echo "== $f ($(stat -c %s "$in") bytes), $FRAMES frames after 3 warm-up, median"
  for t in $THREADS; do
    for b in own openjpeg own-coefficients own-coefficients-fresh; do
      "$D/decoder_scaling" "$in" --backend $b --threads "$t" --frames "$FRAMES"
    done
  done
  if [ -x "$D/opj_decompress" ]; then
    for t in $THREADS; do
      # The tool's own "decode time" (includes its output conversion, not the file write), best of 5.
      best=$(for i in 1 2 3 4 5; do
        LD_LIBRARY_PATH="$D/lib:$D/opjlib" "$D/opj_decompress" -i "$in" -o /tmp/device_scaling_out.raw -threads "$t" 2>&1 |
          grep -i "decode time" | grep -oE '[0-9]+(\.[0-9]+)?' | head -1
      done | sort -g | head -1)
      echo "opj_decompress -threads $t: best decode time ${best:-?} ms"
    done
    rm -f /tmp/device_scaling_out.raw
  fi
  if [ -x "$D/grk_decompress" ]; then
    for t in $THREADS; do
      # Grok's "decompress time" (-v; it includes writing the raw output file), best of 5.
      best=$(for i in 1 2 3 4 5; do
        LD_LIBRARY_PATH="$D/grklib:$D/opjlib" "$D/grk_decompress" -i "$in" -o /tmp/device_scaling_grk.raw -H "$t" -v 2>&1 |
          grep -oiE "decompress time: [0-9]+(\.[0-9]+)?" | grep -oE '[0-9]+(\.[0-9]+)?$' | head -1
      done | sort -g | head -1)
      echo "grk_decompress -H $t: best decompress time ${best:-?} ms"
    done
    rm -f /tmp/device_scaling_grk.raw
  fi
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
