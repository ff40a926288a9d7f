#!/usr/bin/env bash
# Self-play workers as a Slurm job array, all writing into one run directory on a shared
# filesystem, while one trainer (scripts/slurm-train.sh, with `in_process = false` in its
# config) consumes their games:
#
#   sbatch scripts/slurm-train.sh configs/runs/copenhagen.toml /shared/runs/cph
#   sbatch --array=0-31 scripts/slurm-selfplay.sh /shared/runs/cph
#
# Each task loads the newest model (models/latest), plays games_per_shard games, writes one
# shard atomically, reloads, and stops once the trainer has spent its budget. Cancelling,
# preempting or requeueing a task loses only its games in flight (tests/it/slurm.rs measures
# it); a requeued task simply carries on. The defaults below ask for a GPU: on CPU nodes
# override them, e.g. `sbatch --gres=none --cpus-per-task=4 --array=0-63 ...`.
# TAFL_LAB_BIN names the binary (default: this checkout's target/release/tafl-lab).
#SBATCH --job-name=tafl-selfplay
#SBATCH --cpus-per-task=8
#SBATCH --gres=gpu:1
#SBATCH --time=12:00:00
#SBATCH --requeue
set -euo pipefail
run_dir=${1:?usage: sbatch --array=0-N scripts/slurm-selfplay.sh RUN_DIR}
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"
exec "${TAFL_LAB_BIN:-target/release/tafl-lab}" selfplay --run-dir "$run_dir" --name "slurm${SLURM_ARRAY_TASK_ID:-0}" --quiet
