#!/bin/bash
# Fills a git-ignored folder (default: <repo>/.device) with what the GPU machine needs to
# run the CUDA tests and benchmarks: stripped executables, the shared libraries they
# load that the machine lacks, the photo corpus, the GL loader packages, opj_decompress.
# Then: device run with carry [".device"] and `bash .device/device_checks.sh` or
# `bash .device/device_bench.sh` (copied in here too).
set -euo pipefail
BUILD=${BUILD:-build/release}
D=${1:-.device}
mkdir -p "$D/lib" "$D/opjlib" "$D/corpus" "$D/gl"
for b in gpu_cuda_tests gpu_gl_tests gpu_stage_bench; do strip -o "$D/$b" "$BUILD/bin/$b"; done
cp -L /lib/x86_64-linux-gnu/libopenjp2.so.7 /lib/x86_64-linux-gnu/libfmt.so.9 "$D/lib/"
"$BUILD/bin/gpu_corpus_maker" "$D/corpus" --bench > /dev/null
cp /usr/bin/opj_decompress "$D/"
for l in libpng16.so.16 libtiff.so.6 liblcms2.so.2 libwebp.so.7 libLerc.so.4 libjbig.so.0 libjpeg.so.62 libdeflate.so.0 libzstd.so.1 liblzma.so.5; do
  cp -L "/lib/x86_64-linux-gnu/$l" "$D/opjlib/"
done
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
mkdir -p /tmp/amd64/partial
(cd "$D/gl" && apt-get $o update > /dev/null && apt-get $o download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
cp "$(dirname "$0")/device_checks.sh" "$(dirname "$0")/device_bench.sh" "$(dirname "$0")/device_display_checks.sh" "$D/"
du -sh "$D"
