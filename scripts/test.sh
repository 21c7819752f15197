#!/usr/bin/env bash
# One command for a developer or CI: set up, build, and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh release
ctest --preset release -j 2 --timeout 900
