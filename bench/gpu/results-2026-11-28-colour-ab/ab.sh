#!/usr/bin/env bash
# A/B of the display path before (gsb_base, 93f5b6a) and after (gsb_new) the colour kernel's HDR
# and X'Y'Z' branches: two alternations, three frames.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib
nvidia-smi -L
for rep in 1 2; do
  for b in gsb_base gsb_new; do
    for f in photo_1080_422_10_97 photo_1080_422_10_97_cb32_tp photo_2160_422_10_97_8m; do
      echo "$rep $b $f"
      ./$b --backend cuda-display --tier1 gpu --tier1-host -1 --threads 16 --frames 150 corpus/bench/$f.j2k 2>&1 | grep -E "median|GPU medians" | sed 's/^/  /'
    done
  done
done
