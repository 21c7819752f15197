#!/bin/bash
# Fills a folder (default: <repo>/.device-scaling, git-ignored) with what
# device_scaling.sh needs on a machine without Qt/OpenJPEG/fmt: the stripped decoder_scaling
# tool, libopenjp2 and libfmt, the two benchmark codestreams, opj_decompress and
# grk_decompress with the libraries they load, and the script itself.
#   bench/decoder/make_scaling_bundle.sh [folder]      (BUILD=build/release by default)
set -euo pipefail
BUILD=${BUILD:-build/release}
D=${1:-.device-scaling}
mkdir -p "$D/lib" "$D/opjlib"
strip -o "$D/decoder_scaling" "$BUILD/bin/decoder_scaling"
cp -L /lib/x86_64-linux-gnu/libopenjp2.so.7 /lib/x86_64-linux-gnu/libfmt.so.9 "$D/lib/"
"$BUILD/bin/decoder_bench" --write-inputs="$D" > /dev/null
if [ -x /usr/bin/opj_decompress ]; then
  cp /usr/bin/opj_decompress "$D/"
  for l in libpng16.so.16 libtiff.so.6 liblcms2.so.2 libwebp.so.7 libLerc.so.4 libjbig.so.0 libjpeg.so.62 libdeflate.so.0 libzstd.so.1 liblzma.so.5; do
    [ -e "/lib/x86_64-linux-gnu/$l" ] && cp -L "/lib/x86_64-linux-gnu/$l" "$D/opjlib/"
  done
fi
if [ -x /usr/bin/grk_decompress ]; then
  mkdir -p "$D/grklib"
  cp /usr/bin/grk_decompress "$D/"
  for l in libgrokj2k.so.1 libgrokj2kcodec.so.1 libperl.so.5.36 libcrypt.so.1 libpng16.so.16 libtiff.so.6 liblcms2.so.2 \
           libwebp.so.7 libLerc.so.4 libjbig.so.0 libjpeg.so.62 libdeflate.so.0 libzstd.so.1 liblzma.so.5; do
    [ -e "/lib/x86_64-linux-gnu/$l" ] && cp -L "/lib/x86_64-linux-gnu/$l" "$D/grklib/"
  done
fi
cp "$(dirname "$0")/device_scaling.sh" "$D/"
du -sh "$D"
