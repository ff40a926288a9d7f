#!/usr/bin/env bash
# Every test on a fresh machine: installs LibTorch once (see scripts/env.sh), then builds and
# runs the whole suite in release mode (one build shared with the main job). Extra arguments go
# to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo test --release "$@"
