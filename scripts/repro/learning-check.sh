#!/usr/bin/env bash
# Reproduces the learning record in docs/results/brandubh-default-run.md: trains the default
# brandubh config from scratch (its 60-minute budget) in a new run directory, then scores the
# final model at 64 simulations against mcts:sims=400 and against random, 200 games each with
# the sides split evenly, and writes the learning curve (RUN_DIR/report/learning.md and
# plots).
# Usage: scripts/repro/learning-check.sh [RUN_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
cargo build --release --quiet
run=${1:-runs/brandubh-check}
if [[ -e "$run" ]]; then
    echo "error: $run exists; pass another run directory" >&2
    exit 1
fi
bin=target/release/tafl-lab
"$bin" train --run-dir "$run" --quiet
model="az:model=$run,sims=64"
"$bin" match --variant brandubh --a "$model" --b mcts:sims=400 --games 200 --seed 11 --json --quiet | tee "$run/final-vs-mcts400.json"
"$bin" match --variant brandubh --a "$model" --b random --games 200 --seed 12 --json --quiet | tee "$run/final-vs-random.json"
"$bin" report --run-dir "$run"
