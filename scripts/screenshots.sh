#!/usr/bin/env bash
# Retakes the operator-view screenshots in docs/ (healthy, alarmed, graphs): the test
# PlayerUi.OperatorViewScreenshotsHealthyAlarmedAndGraphs takes them under Xvfb and, with
# J2K_SCREENSHOT_DIR set, copies them there.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh release
J2K_SCREENSHOT_DIR="$PWD/docs" ctest --preset release -R 'PlayerUi.OperatorViewScreenshots' --output-on-failure
ls -l docs/operator-*.png
