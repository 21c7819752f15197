#!/usr/bin/env bash
# Installs j2kplay's build and test dependencies from Debian 12 packages.
# Idempotent: packages already present are skipped; safe to run on every build.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-private-dev libqt6opengl6-dev qt6-multimedia-dev libgl-dev libglew-dev libegl-dev libopengl-dev
  libboost-dev libboost-system-dev
  libopenjp2-7-dev libopenjp2-tools grokj2k-tools
  libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libpcap-dev
  xvfb xauth libgl1-mesa-dri curl
  ffmpeg gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  clang libclang-rt-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages already installed"
fi
