#!/usr/bin/env bash
# Configures and builds RPMP with CMake + Ninja into BUILD_DIR (default ./build).
# Usage: deploy/build.sh [extra cmake args...]     env: BUILD_DIR, BUILD_TYPE
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" "$@" >/dev/null
ninja -C "$BUILD_DIR" -j "$(nproc)"
