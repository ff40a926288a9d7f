#!/usr/bin/env bash
# Self-play workers as a Slurm job array, all writing into one run directory on a shared
# filesystem, while one trainer consumes their games:
#
#   tafl-lab train --config configs/runs/copenhagen.toml --run-dir /shared/runs/cph   # in_process = false
#   sbatch --array=0-31 scripts/slurm-selfplay.sh /shared/runs/cph
#
# Each task loads the newest model (models/latest), plays games_per_shard games, writes one
# shard atomically, and reloads. Killing or preempting a task loses only its games in
# flight; requeued tasks simply carry on.
#SBATCH --job-name=tafl-selfplay
#SBATCH --cpus-per-task=8
#SBATCH --gres=gpu:1
#SBATCH --time=12:00:00
#SBATCH --requeue
set -euo pipefail
run_dir=${1:?usage: sbatch --array=0-N scripts/slurm-selfplay.sh RUN_DIR}
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"
exec target/release/tafl-lab selfplay --run-dir "$run_dir" --name "slurm${SLURM_ARRAY_TASK_ID:-0}" --quiet
