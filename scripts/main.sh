#!/usr/bin/env bash
# The main job on a fresh machine: installs LibTorch once (torch==2.13.0 from PyPI into a
# virtualenv under ~/.cache/tafl-lab), builds tafl-lab in release mode, and trains the
# embedded default (brandubh from scratch on the CPU, 60 minutes; the budget is printed at
# start) into runs/brandubh. Run it again to continue that run; extra arguments go to
# `tafl-lab train` (e.g. --minutes 10, --quiet, --run-dir D).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo build --release --quiet
run_dir=runs/brandubh
resume=()
if [[ -f "$run_dir/state.json" ]]; then
    resume=(--resume)
fi
exec target/release/tafl-lab train --run-dir "$run_dir" "${resume[@]}" "$@"
