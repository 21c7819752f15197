#!/bin/bash
# Fills a git-ignored folder (default: <repo>/.device-t1) for the GPU tier-1 run: stripped
# test and bench executables, their non-system libraries, the photo corpus with the bench
# frames, the decoder's corpus (every code-block style; encoded by decoder_own_tests under
# TEST_TMPDIR=$T1CORPUS), opj_decompress. The device run sends the session's own checkout,
# not a helper's worktree: copy the folder into a folder of that checkout which its
# .git/info/exclude ignores, then run with carry ["<that folder>"] and
# `OUT=$OUT bash <that folder>/device_tier1.sh` (BASELINES=1, NCU=1, SANITIZE=0: see there).
set -euo pipefail
BUILD=${BUILD:-build/release}
D=${1:-.device-t1}
T1CORPUS=${T1CORPUS:-/tmp/gpu-t1-corpus}
mkdir -p "$D/lib" "$D/opjlib" "$D/corpus" "$D/t1corpus"
for b in gpu_cuda_tests gpu_stage_bench; do strip -o "$D/$b" "$BUILD/bin/$b"; done
cp -L /lib/x86_64-linux-gnu/libopenjp2.so.7 /lib/x86_64-linux-gnu/libfmt.so.9 /lib/x86_64-linux-gnu/libspdlog.so.1.10 "$D/lib/"
# gpu_cuda_tests links the media library, and with it Qt 6 (Gui, Core, ICU, X11, ...), which
# the GPU machine lacks: every library it loads but glibc's and the compiler's, packed (xz:
# ~18 MB of 61), unpacked into lib/ by device_tier1.sh.
rm -rf /tmp/device-t1-libs && mkdir -p /tmp/device-t1-libs/libs
ldd "$BUILD/bin/gpu_cuda_tests" | awk '/=>/ {print $3}' |
  grep -vE "/(libc|libm|libgcc_s|libstdc\+\+|ld-linux-x86-64|libpthread|libdl|librt)\.so" |
  while read -r l; do cp -L "$l" /tmp/device-t1-libs/libs/; done
tar cJf "$D/libs.tar.xz" -C /tmp/device-t1-libs libs
"$BUILD/bin/gpu_corpus_maker" "$D/corpus" --bench > /dev/null
find "$T1CORPUS" -name '*.j2k' -size -2M -exec cp {} "$D/t1corpus/" \;
cp /usr/bin/opj_decompress "$D/"
for l in libpng16.so.16 libtiff.so.6 liblcms2.so.2 libwebp.so.7 libLerc.so.4 libjbig.so.0 libjpeg.so.62 libdeflate.so.0 libzstd.so.1 liblzma.so.5; do
  cp -L "/lib/x86_64-linux-gnu/$l" "$D/opjlib/"
done
cp "$(dirname "$0")/device_tier1.sh" "$D/"
du -sh "$D"
