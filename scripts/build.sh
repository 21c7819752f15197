#!/usr/bin/env bash
# Installs dependencies (idempotent) and builds a preset: release (default), debug, asan.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
./scripts/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
