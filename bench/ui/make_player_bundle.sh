#!/usr/bin/env bash
# Packs what the GPU machine needs to run the player's own window there (issue 17): the
# tools, the Qt libraries and plugins they load, the eglfs device plugin for NVIDIA's
# device-platform EGL, the GL loaders (glvnd), a font and a fontconfig file, as one xz
# tarball under the 64 MiB the working tree may carry. The machine has NVIDIA's driver
# (its EGL vendor library) but no Qt, no X, no GL loaders.
#
#   bench/ui/make_player_bundle.sh [BUILD_DIR] [OUT_DIR]      (defaults: build/release .device-ui)
#   then, on the device:  bash bench/ui/device_player.sh .device-ui "$OUT"
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build/release}"
out="${2:-.device-ui}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/plugins/platforms" "$stage/plugins/egldeviceintegrations" "$stage/fonts" "$out"

tools=(j2kplay j2ksend j2kprobe)
for t in "${tools[@]}"; do cp "$build/bin/$t" "$stage/bin/"; done
[ -x "$build/bin/ui_gpu_tests" ] && cp "$build/bin/ui_gpu_tests" "$stage/bin/"
cp /usr/bin/time "$stage/bin/" 2>/dev/null || true  # GNU time: the e2e benchmark's CPU and peak RSS
qt_plugins="$(qtpaths6 --query QT_INSTALL_PLUGINS 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/qt6/plugins)"
cp "$qt_plugins/platforms/libqeglfs.so" "$stage/plugins/platforms/"
cp "$build/plugins/egldeviceintegrations/libj2k_eglfs_device.so" "$stage/plugins/egldeviceintegrations/"

# Every shared library those load, but the C/C++ runtime (the machine's own is newer) and
# the NVIDIA driver's libraries (the machine's, matching its kernel module).
skip='^(ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s\.so|libstdc\+\+\.so|linux-vdso|libnvidia|libcuda)'
{
  for f in "$stage"/bin/* "$stage"/plugins/*/*.so; do ldd "$f"; done
  # The glvnd loaders are opened at run time (dlopen), not linked: name them.
  for l in libEGL.so.1 libOpenGL.so.0 libGLX.so.0 libGLdispatch.so.0 libGL.so.1; do echo "$l => /lib/x86_64-linux-gnu/$l"; done
} | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
  [[ "$name" =~ $skip ]] && continue
  cp -L "$path" "$stage/lib/$name"
done

cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf "$stage/fonts/" 2>/dev/null || true
cat > "$stage/fonts/fonts.conf" <<'CONF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir prefix="relative">.</dir><cachedir>/tmp/j2k-fontconfig-cache</cachedir></fontconfig>
CONF

# Debug information is most of a RelWithDebInfo binary: the device needs none of it.
strip --strip-debug "$stage"/bin/* "$stage"/plugins/*/*.so "$stage"/lib/* 2>/dev/null || true
XZ_OPT="-6 -T2" tar -C "$stage" -cJf "$out/player.tar.xz" .
du -sh "$stage" | sed 's/^/unpacked: /'
du -h "$out/player.tar.xz" | sed 's/^/bundle:   /'
