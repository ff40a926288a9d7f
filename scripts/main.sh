#!/usr/bin/env bash
# The main job on a fresh machine: installs LibTorch once (torch==2.13.0 from PyPI into a
# virtualenv under ~/.cache/tafl-lab), builds tafl-lab in release mode, and runs the embedded
# default. Until training lands that is one game of brandubh between two random players,
# printed move by move with its result and reason. Extra arguments go to `tafl-lab demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build --release --quiet
exec target/release/tafl-lab demo --variant brandubh "$@"
