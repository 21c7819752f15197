# Sourced by the device scripts: unpacks the player bundle (make_player_bundle.sh) once into
# $root and sets up its libraries and Qt's eglfs platform on NVIDIA's device-platform EGL
# (the j2k_egldevice integration), the screen J2K_EGLDEVICE_SIZE (default 1280x720).
#   bundle=DIR; . bench/ui/eglfs_env.sh
root=/tmp/j2k-player
mkdir -p "$root"
[ -x "$root/bin/j2kplay" ] || tar -C "$root" -xJf "$bundle/player.tar.xz"
export LD_LIBRARY_PATH="$root/lib"
export QT_PLUGIN_PATH="$root/plugins" QT_QPA_PLATFORM=eglfs QT_QPA_EGLFS_INTEGRATION=j2k_egldevice
export QT_QPA_EGLFS_DISABLE_INPUT=1 QT_QPA_EGLFS_HIDECURSOR=1 J2K_EGLDEVICE_SIZE="${J2K_EGLDEVICE_SIZE:-1280x720}"
export FONTCONFIG_FILE="$root/fonts/fonts.conf" XDG_CACHE_HOME=/tmp/j2k-cache
# NVIDIA's EGL vendor library, as the driver installs it on these machines.
for f in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
  [ -f "$f" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$f" && break
done
