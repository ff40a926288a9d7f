#!/usr/bin/env bash
# Every test on a fresh machine. First the rules crate, before LibTorch is even installed (it
# must build and pass without it); then installs LibTorch once (see scripts/env.sh) and builds
# and runs the rest of the suite in release mode (one build shared with the main job), with
# hnefatafl-copenhagen's HTP engine installed once from crates.io (scripts/peers.sh) for the
# tests that play against it, and headless Chromium once with apt-get (scripts/browser.sh) for the
# viewer's browser tests.
# Extra arguments go to one `cargo test --release --workspace` instead (e.g. `--test cli`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -gt 0 ]]; then
    source scripts/env.sh
    source scripts/peers.sh
    source scripts/browser.sh
    exec cargo test --release --workspace "$@"
fi
env -u LIBTORCH_USE_PYTORCH -u LIBTORCH cargo test --release -p tafl-rules
source scripts/env.sh
source scripts/peers.sh
source scripts/browser.sh
cargo test --release -p tafl-lab
