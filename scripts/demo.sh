#!/usr/bin/env bash
# One command for a new user: set up, build, and play the built-in demo stream.
# With a display it opens the player window; without one it prints live statistics.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh release
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec build/release/bin/j2kplay --demo "$@"
else
  echo "no display: playing the demo headless for 20 s (pass --quit-after N to change)"
  exec build/release/bin/j2kplay --demo --headless --quit-after 20 "$@"
fi
